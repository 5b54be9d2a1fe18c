// A schedule of application backups (spec.appBackup) against an in-memory cluster: each run creates ONE AppBackup
// of all the schedule's PVCs with the schedule's hooks, classes and expiry; an earlier run's AppBackup still taking
// its snapshots holds the next run back under Forbid while one already Uploading does not; the run ends with its
// AppBackup; retention counts whole AppBackups, one per run, and spares one a restore is reading; the run's role
// allows what it does to AppBackups.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { AppBackup, AppBackupPhase } from '../../../src/shared/api/app.ts';
import type { BackupSchedule } from '../../../src/shared/api/types.ts';
import { KubeError } from '../../../src/shared/kube/errors.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import type { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { runSchedule } from '../../../src/steps/schedule/run.ts';
import { context, schedule, seeded } from './world.ts';

type Backup = AppBackup & KubeObject;
const ref = { namespace: 'app', name: 'nightly' };
const mine = 'nightly-app-202503011000';
const hooks = {
  pre: [{ name: 'quiesce', selector: { matchLabels: { app: 'db' } }, command: ['psql', '-c', 'CHECKPOINT'] }],
};

function appSchedule(spec: Partial<BackupSchedule['spec']> = {}): BackupSchedule & KubeObject {
  return schedule({
    appBackup: { hooks, freeze: true, volumeGroupSnapshotClassName: 'group', volumeSnapshotClassName: 'single' },
    expire: '720h',
    ...spec,
  });
}

/** An AppBackup of an earlier run of the schedule, in `phase`, with two volumes. */
function earlier(at: string, phase: AppBackupPhase = 'Completed'): Backup {
  const run = at.replace(/[-T:]/g, '').slice(0, 12);
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'AppBackup',
    metadata: {
      name: `nightly-app-${run}`,
      namespace: 'app',
      labels: { 'ferry.dev/schedule': 'nightly', 'ferry.dev/run': run },
      annotations: { 'ferry.dev/scheduled-time': at },
    },
    spec: { pvcs: ['data', 'wal'], backupStorageLocation: 'default' },
    status: {
      phase,
      volumes: ['data', 'wal'].map((pvc) => ({ pvc, dataUpload: `nightly-app-${run}-${pvc}`, phase: 'Completed' })),
    },
  };
}

/** The run's own AppBackup goes through Uploading to `end`, as its step would take it. */
function progress(kube: MemoryKube, end: AppBackupPhase = 'Completed'): () => void {
  const phases: AppBackupPhase[] = ['InProgress', 'Uploading', end];
  let sleeps = 0;
  return () => {
    if (++sleeps > 20) throw new Error('the run never ended');
    if (!kube.peek({ kind: 'AppBackup', namespace: 'app', name: mine })) return;
    kube.mutate({ kind: 'AppBackup', namespace: 'app', name: mine }, (o) => {
      const phase = phases.shift() ?? end;
      o.status = {
        phase,
        volumes: ['data', 'late'].map((pvc) => ({
          pvc,
          dataUpload: `${mine}-${pvc}`,
          phase: phase === 'Uploading' ? 'InProgress' : end === 'Completed' || pvc === 'data' ? 'Completed' : 'Failed',
        })),
      };
    });
  };
}

function statusOf(kube: MemoryKube): NonNullable<BackupSchedule['status']> {
  return kube.peek<BackupSchedule & KubeObject>({ kind: 'BackupSchedule', namespace: 'app', name: 'nightly' })!.status!;
}

const names = (kube: MemoryKube): string[] =>
  kube
    .all('AppBackup')
    .map((o) => o.metadata.name)
    .sort();

describe('schedule run of application backups', () => {
  it('creates one AppBackup of all the PVCs per run, with the schedule spec, waits for it, and records its volumes', async () => {
    const kube = seeded(appSchedule());
    const outcome = await runSchedule(context(kube, 'schedule-run', progress(kube)), ref);
    assert.equal(outcome.outcome, 'Advanced', outcome.reason);
    assert.deepEqual(names(kube), [mine]);
    assert.deepEqual(kube.all('DataUpload'), [], 'no DataUpload per PVC');
    const ab = kube.peek<Backup>({ kind: 'AppBackup', namespace: 'app', name: mine })!;
    assert.deepEqual(ab.metadata.labels, { 'ferry.dev/schedule': 'nightly', 'ferry.dev/run': '202503011000' });
    assert.deepEqual(ab.metadata.annotations, { 'ferry.dev/scheduled-time': '2025-03-01T10:00:00Z' });
    assert.deepEqual(ab.spec, {
      pvcs: ['data'],
      selector: { matchLabels: { backup: 'yes' } },
      backupStorageLocation: 'default',
      hooks,
      freeze: true,
      volumeGroupSnapshotClassName: 'group',
      volumeSnapshotClassName: 'single',
      expire: '720h',
      tags: { schedule: 'nightly', run: '202503011000' },
    });
    const s = statusOf(kube);
    assert.equal(s.lastRun?.outcome, 'Succeeded');
    assert.equal(s.lastSuccessfulTime, '2025-03-01T10:00:00Z');
    assert.deepEqual(
      s.lastRun?.pvcs?.map((p) => [p.pvc, p.dataUpload, p.phase]),
      [
        ['data', `${mine}-data`, 'Completed'],
        ['late', `${mine}-late`, 'Completed'],
      ],
    );
    // a retried pod of the same run makes nothing new
    await runSchedule(context(kube, 'schedule-run', progress(kube)), ref);
    assert.equal(kube.actions.filter((a) => a.verb === 'create' && a.kind === 'AppBackup').length, 1);
  });

  it('an AppBackup that ends PartiallyFailed fails the run, naming it, and retention does not run', async () => {
    const kube = seeded(appSchedule({ retention: { keepLast: 1 } }), earlier('2025-03-01T09:00:00Z'));
    const outcome = await runSchedule(context(kube, 'schedule-run', progress(kube, 'PartiallyFailed')), ref);
    assert.equal(outcome.outcome, 'Failed');
    assert.match(statusOf(kube).lastRun?.message ?? '', /AppBackup nightly-app-202503011000 ended PartiallyFailed/);
    assert.deepEqual(names(kube), ['nightly-app-202503010900', mine]);
  });

  it('an AppBackup admission refuses fails the run with the refusal', async () => {
    const kube = seeded(appSchedule());
    kube.failNext('create', 'AppBackup', new KubeError(403, 'Forbidden', 'location "default" does not serve app'));
    const outcome = await runSchedule(context(kube, 'schedule-run', progress(kube)), ref);
    assert.equal(outcome.outcome, 'Failed');
    const s = statusOf(kube);
    assert.equal(s.lastRun?.outcome, 'Failed');
    assert.match(s.lastRun?.message ?? '', /was refused: location "default" does not serve app/);
    assert.equal(s.lastScheduleTime, '2025-03-01T10:00:00Z');
  });

  it('concurrency: an earlier AppBackup Uploading does not hold the run back; one InProgress does under Forbid', async () => {
    for (const [policy, phase, runs, canceled] of [
      ['Forbid', 'Uploading', true, false],
      ['Forbid', 'UploadingPartialFailure', true, false],
      ['Forbid', 'InProgress', false, false],
      ['Forbid', 'New', false, false],
      ['Replace', 'InProgress', true, true],
      ['Replace', 'Uploading', true, false],
      ['Allow', 'InProgress', true, false],
    ] as const) {
      const kube = seeded(appSchedule({ concurrencyPolicy: policy }), earlier('2025-03-01T09:55:00Z', phase));
      const outcome = await runSchedule(context(kube, 'schedule-run', progress(kube)), ref);
      const label = `${policy} with the earlier one ${phase}`;
      assert.equal(outcome.outcome, runs ? 'Advanced' : 'Skipped', label);
      assert.equal(Boolean(kube.peek({ kind: 'AppBackup', namespace: 'app', name: mine })), runs, label);
      const previous = kube.peek<Backup>({ kind: 'AppBackup', namespace: 'app', name: 'nightly-app-202503010955' })!;
      assert.equal(previous.spec.cancel === true, canceled, label);
      if (!runs) assert.match(statusOf(kube).lastRun?.message ?? '', /nightly-app-202503010955.*Forbid/, label);
    }
  });

  it('retention counts whole AppBackups, one per run, and spares one an AppRestore is reading', async () => {
    const restore: KubeObject = {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'AppRestore',
      metadata: { name: 'back', namespace: 'app' },
      spec: { appBackup: { name: 'nightly-app-202503010700' } },
      status: { phase: 'InProgress' },
    };
    const kube = seeded(
      appSchedule({ retention: { keepLast: 2 } }),
      earlier('2025-03-01T09:00:00Z'),
      earlier('2025-03-01T08:00:00Z'),
      earlier('2025-03-01T07:00:00Z'),
      earlier('2025-03-01T06:00:00Z', 'PartiallyFailed'),
      restore,
    );
    const outcome = await runSchedule(context(kube, 'schedule-run', progress(kube)), ref);
    assert.equal(outcome.outcome, 'Advanced', outcome.reason);
    // keepLast 2 keeps this run's and 09:00 (two AppBackups, four volumes); 08:00 goes whole; 07:00 is being read;
    // the PartiallyFailed 06:00 is not counted
    assert.deepEqual(names(kube), [
      'nightly-app-202503010600',
      'nightly-app-202503010700',
      'nightly-app-202503010900',
      mine,
    ]);
    const s = statusOf(kube);
    assert.deepEqual(s.lastRun?.deleted, ['nightly-app-202503010800']);
    assert.match(s.lastRun?.message ?? '', /kept nightly-app-202503010700 \(AppRestore app\/back is reading it\)/);
    assert.deepEqual(
      kube.actions.filter((a) => a.verb === 'delete').map((a) => [a.kind, a.name]),
      [['AppBackup', 'nightly-app-202503010800']],
    );
  });

  it("the run's ClusterRole lets it do all of that to AppBackups, and see AppRestores", () => {
    const file = join(import.meta.dirname, '..', '..', '..', 'policies', 'step-schedule.yaml');
    const docs = yaml.loadAll(readFileSync(file, 'utf8')) as KubeObject[];
    const role = docs.find((d) => d.kind === 'ClusterRole' && d.metadata.name === 'ferry-schedule-run')!;
    const rules = role.rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    const allowed = (resource: string, verb: string): boolean =>
      rules.some((r) => r.apiGroups.includes('ferry.dev') && r.resources.includes(resource) && r.verbs.includes(verb));
    for (const verb of ['get', 'list', 'create', 'patch', 'delete'])
      assert.ok(allowed('appbackups', verb), `appbackups ${verb}`);
    assert.ok(allowed('apprestores', 'list'), 'apprestores list');
    assert.ok(!allowed('appbackups', 'update') && !allowed('appbackups/status', 'update'), 'no status writes');
  });
});
