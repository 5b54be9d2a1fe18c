// The two schedule commands against an in-memory cluster: reconcile makes the owned CronJob (from the real
// template), ServiceAccount and RoleBinding; a run creates one DataUpload per named or selected PVC, records missed
// runs, honours concurrencyPolicy, waits, and applies retention without deleting what a restore reads.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { BackupSchedule, DataUpload } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { reconcileSchedule } from '../../../src/steps/schedule/reconcile.ts';
import { runSchedule } from '../../../src/steps/schedule/run.ts';
import { download, upload } from '../dispatcher/world.ts';
import { context, schedule, seeded } from './world.ts';

const jobsDir = join(import.meta.dirname, '..', '..', '..', 'jobs');
const runTemplate = yaml.load(readFileSync(join(jobsDir, 'schedule-run.yaml'), 'utf8')) as KubeObject;

/** Every DataUpload of the run reaches `phase`, as the steps would take it there. */
function finishAll(kube: MemoryKube, phase: 'Completed' | 'Failed' = 'Completed'): () => void {
  return () => {
    for (const du of kube.all('DataUpload')) {
      if (du.metadata.labels?.['ferry.dev/run'] === '202503011000')
        kube.mutate({ kind: 'DataUpload', namespace: 'app', name: du.metadata.name }, (o) => {
          o.status = { phase };
        });
    }
  };
}

function earlier(name: string, at: string, phase: 'Completed' | 'InProgress' = 'Completed'): KubeObject {
  const du = upload(name, phase);
  du.metadata.labels = { 'ferry.dev/schedule': 'nightly', 'ferry.dev/run': at.replace(/[-T:]/g, '').slice(0, 12) };
  du.metadata.annotations = { 'ferry.dev/scheduled-time': at };
  return du;
}

describe('schedule reconcile', () => {
  it('makes the CronJob from the template, owned by the schedule, run by its own ServiceAccount; again converges', async () => {
    const kube = seeded(runTemplate, schedule({ timeZone: 'Europe/Berlin' }));
    await reconcileSchedule(context(kube, 'schedule'), { namespace: 'app', name: 'nightly' });
    const cron = kube.peek<KubeObject>({ kind: 'CronJob', namespace: 'app', name: 'ferry-schedule-nightly' })!;
    const spec = cron.spec as any;
    assert.deepEqual(
      [spec.schedule, spec.timeZone, spec.suspend, spec.concurrencyPolicy],
      ['*/5 * * * *', 'Europe/Berlin', false, 'Allow'],
    );
    assert.deepEqual(cron.metadata.ownerReferences, [
      {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'BackupSchedule',
        name: 'nightly',
        uid: 'abcdef01-2345-4000-8000-000000000000',
        controller: true,
      },
    ]);
    const pod = spec.jobTemplate.spec.template.spec;
    assert.equal(pod.serviceAccountName, 'ferry-schedule-nightly');
    assert.deepEqual(pod.containers[0].args, ['schedule-run', 'app/nightly']);
    assert.deepEqual(
      pod.containers[0].env.find((e: { name: string }) => e.name === 'FERRY_NAMESPACE'),
      { name: 'FERRY_NAMESPACE', value: 'ferry-system' },
    );
    const binding = kube.peek<KubeObject>({ kind: 'RoleBinding', namespace: 'app', name: 'ferry-schedule-nightly' })!;
    assert.deepEqual(binding.roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'ferry-schedule-run',
    });
    assert.ok(kube.peek({ kind: 'ServiceAccount', namespace: 'app', name: 'ferry-schedule-nightly' }));
    const s = kube.peek<BackupSchedule & KubeObject>({ kind: 'BackupSchedule', namespace: 'app', name: 'nightly' })!;
    assert.equal(s.status?.observedGeneration, 1);
    assert.equal(s.status?.nextScheduleTime, '2025-03-01T10:05:00Z');
    // suspend: the next reconcile suspends the same CronJob and clears the next time
    kube.mutate({ kind: 'BackupSchedule', namespace: 'app', name: 'nightly' }, (o) => {
      (o.spec as any).suspend = true;
      o.metadata.generation = 2;
    });
    await reconcileSchedule(context(kube, 'schedule'), { namespace: 'app', name: 'nightly' });
    assert.equal(
      (kube.peek<KubeObject>({ kind: 'CronJob', namespace: 'app', name: 'ferry-schedule-nightly' })!.spec as any)
        .suspend,
      true,
    );
    const after = kube.peek<BackupSchedule & KubeObject>({
      kind: 'BackupSchedule',
      namespace: 'app',
      name: 'nightly',
    })!;
    assert.equal(after.status?.observedGeneration, 2);
    assert.equal(after.status?.nextScheduleTime, undefined);
    assert.equal(kube.all('CronJob').filter((c) => c.metadata.namespace === 'app').length, 1);
  });
});

describe('schedule run', () => {
  it('backs up named and selected PVCs once per run, counts missed runs, then applies retention sparing what a restore reads', async () => {
    const reader = download('restore', 'InProgress', {
      spec: {
        targetPVC: { name: 'x' },
        backupStorageLocation: 'default',
        source: { dataUpload: { name: 'nightly-data-202503010700' } },
      },
    });
    reader.metadata.namespace = 'app';
    const kube = seeded(
      schedule({ retention: { keepLast: 2 }, expire: '720h' }, { lastScheduleTime: '2025-03-01T09:40:00Z' }),
      earlier('nightly-data-202503010900', '2025-03-01T09:00:00Z'),
      earlier('nightly-data-202503010800', '2025-03-01T08:00:00Z'),
      earlier('nightly-data-202503010700', '2025-03-01T07:00:00Z'),
      reader,
    );
    const outcome = await runSchedule(context(kube, 'schedule-run', finishAll(kube)), {
      namespace: 'app',
      name: 'nightly',
    });
    assert.equal(outcome.outcome, 'Advanced', outcome.reason);
    const created = kube
      .all('DataUpload')
      .filter((d) => d.metadata.labels?.['ferry.dev/run'] === '202503011000') as (DataUpload & KubeObject)[];
    assert.deepEqual(
      created
        .map((d) => [
          d.metadata.name,
          d.spec.sourcePVC,
          d.spec.expire,
          d.metadata.annotations?.['ferry.dev/scheduled-time'],
        ])
        .sort(),
      [
        ['nightly-data-202503011000', 'data', '720h', '2025-03-01T10:00:00Z'],
        ['nightly-late-202503011000', 'late', '720h', '2025-03-01T10:00:00Z'],
      ],
    );
    // keepLast 2 of PVC data keeps 10:00 and 09:00; 08:00 goes; 07:00 would go but a restore is reading it
    assert.deepEqual(
      kube
        .all('DataUpload')
        .map((d) => d.metadata.name)
        .sort(),
      [
        'nightly-data-202503010700',
        'nightly-data-202503010900',
        'nightly-data-202503011000',
        'nightly-late-202503011000',
      ],
    );
    const s = kube.peek<BackupSchedule & KubeObject>({
      kind: 'BackupSchedule',
      namespace: 'app',
      name: 'nightly',
    })!.status!;
    assert.equal(s.lastScheduleTime, '2025-03-01T10:00:00Z');
    assert.equal(s.lastSuccessfulTime, '2025-03-01T10:00:00Z');
    assert.equal(s.nextScheduleTime, '2025-03-01T10:05:00Z');
    assert.equal(s.missedRuns, 3, '09:45, 09:50 and 09:55 never ran');
    assert.equal(s.conditions?.find((c) => c.type === 'MissedRun')?.status, 'True');
    assert.equal(s.lastRun?.outcome, 'Succeeded');
    assert.deepEqual(s.lastRun?.deleted, ['nightly-data-202503010800']);
    assert.deepEqual(
      s.lastRun?.pvcs?.map((p) => [p.pvc, p.phase]),
      [
        ['data', 'Completed'],
        ['late', 'Completed'],
      ],
    );
    // the same run again (a retried pod) creates nothing new and counts nothing twice
    await runSchedule(context(kube, 'schedule-run', finishAll(kube)), { namespace: 'app', name: 'nightly' });
    assert.equal(kube.all('DataUpload').length, 4);
    assert.equal(
      kube.peek<BackupSchedule & KubeObject>({ kind: 'BackupSchedule', namespace: 'app', name: 'nightly' })!.status!
        .missedRuns,
      3,
    );
  });

  it('a failed backup fails the run and retention does not run', async () => {
    const kube = seeded(
      schedule({ retention: { keepLast: 1 } }),
      earlier('nightly-data-202503010900', '2025-03-01T09:00:00Z'),
    );
    const outcome = await runSchedule(context(kube, 'schedule-run', finishAll(kube, 'Failed')), {
      namespace: 'app',
      name: 'nightly',
    });
    assert.equal(outcome.outcome, 'Failed');
    assert.ok(kube.peek({ kind: 'DataUpload', namespace: 'app', name: 'nightly-data-202503010900' }));
    const s = kube.peek<BackupSchedule & KubeObject>({
      kind: 'BackupSchedule',
      namespace: 'app',
      name: 'nightly',
    })!.status!;
    assert.equal(s.lastRun?.outcome, 'Failed');
    assert.equal(s.lastSuccessfulTime, undefined);
  });

  it('concurrencyPolicy: Forbid skips the run, Replace cancels the earlier one, Allow runs beside it', async () => {
    for (const policy of ['Forbid', 'Replace', 'Allow'] as const) {
      const kube = seeded(
        schedule({ concurrencyPolicy: policy, selector: undefined }),
        earlier('nightly-data-202503010955', '2025-03-01T09:55:00Z', 'InProgress'),
      );
      const outcome = await runSchedule(context(kube, 'schedule-run', finishAll(kube)), {
        namespace: 'app',
        name: 'nightly',
      });
      const previous = kube.peek<DataUpload & KubeObject>({
        kind: 'DataUpload',
        namespace: 'app',
        name: 'nightly-data-202503010955',
      })!;
      const mine = kube.peek({ kind: 'DataUpload', namespace: 'app', name: 'nightly-data-202503011000' });
      assert.equal(outcome.outcome, policy === 'Forbid' ? 'Skipped' : 'Advanced', policy);
      assert.equal(Boolean(mine), policy !== 'Forbid', policy);
      assert.equal(previous.spec.cancel === true, policy === 'Replace', policy);
    }
  });

  it('runs due while the schedule was suspended are not counted as missed', async () => {
    const resumed = {
      type: 'Ready',
      status: 'True' as const,
      reason: 'Scheduled',
      message: 'resumed',
      lastTransitionTime: '2025-03-01T09:51:00Z',
    };
    const kube = seeded(
      schedule({ selector: undefined }, { lastScheduleTime: '2025-03-01T09:00:00Z', conditions: [resumed] }),
    );
    await runSchedule(context(kube, 'schedule-run', finishAll(kube)), { namespace: 'app', name: 'nightly' });
    const s = kube.peek<BackupSchedule & KubeObject>({
      kind: 'BackupSchedule',
      namespace: 'app',
      name: 'nightly',
    })!.status!;
    assert.equal(s.missedRuns, 1, 'only 09:55 was due after the resumption at 09:51 and did not run');
  });

  it('a suspended schedule does not run', async () => {
    const kube = seeded(schedule({ suspend: true }));
    assert.equal(
      (await runSchedule(context(kube, 'schedule-run'), { namespace: 'app', name: 'nightly' })).outcome,
      'Skipped',
    );
    assert.equal(kube.all('DataUpload').length, 0);
  });
});
