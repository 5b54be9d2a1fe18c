// BackupSchedule at the dispatcher: a wrong cron expression or time zone is denied naming the field, a valid
// schedule starts its reconcile Job once per generation the apiserver stores (never on a dry run), and deleting a
// schedule annotated ferry.dev/delete-backups deletes its DataUploads and AppBackups (and only then: the annotation and the
// deletion are read from the apiserver, never taken from a review).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import { sweepSchedules } from '../../../src/dispatcher/schedule.ts';
import type { BackupSchedule } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { ferryNamespace, jobs, review, upload, world } from '../dispatcher/world.ts';
import { nightlySchedule as schedule } from '../../support/backup-schedule.ts';

const jobsDir = join(import.meta.dirname, '..', '..', '..', 'jobs');

function scheduleWorld() {
  const w = world();
  w.kube.seed(yaml.load(readFileSync(join(jobsDir, 'schedule.yaml'), 'utf8')) as KubeObject);
  return w;
}

async function answer(w: ReturnType<typeof world>, body: ReturnType<typeof review>) {
  const result = await handleReview(body, w.handler);
  assert.equal(result.status, 200);
  return result.review.response!;
}

describe('BackupSchedule admission', () => {
  const denied: [string, Partial<BackupSchedule['spec']>, RegExp][] = [
    // the shape (five fields or a macro) is the CRD's own check too; the meaning only the dispatcher checks
    [
      'a cron expression with four fields',
      { schedule: '* * * *' },
      /^spec\.schedule: must be a cron schedule of five fields/,
    ],
    [
      'a step of zero',
      { schedule: '*/0 * * * *' },
      /^spec\.schedule: the step "\/0" in the minute field must be a whole number above 0/,
    ],
    [
      'a weekday name that is not one',
      { schedule: '0 0 * * FUN' },
      /^spec\.schedule: "FUN" in the day of week field is not a number or a name/,
    ],
    [
      'a minute out of range',
      { schedule: '61 * * * *' },
      /^spec\.schedule: 61 in the minute field is out of range 0-59/,
    ],
    ['an unknown macro', { schedule: '@sometimes' }, /^spec\.schedule: must be a cron schedule/],
    [
      'an unknown time zone',
      { timeZone: 'Mars/Olympus_Mons' },
      /^spec\.timeZone: "Mars\/Olympus_Mons" is not a time zone known to the IANA/,
    ],
    ['an offset for a time zone', { timeZone: '+01:00' }, /^spec\.timeZone: must be an IANA time zone name/],
    [
      'no PVCs named or selected',
      { pvcs: undefined },
      /^spec: name PVCs in spec\.pvcs or select them with spec\.selector/,
    ],
    ['an empty selector', { pvcs: undefined, selector: {} }, /^spec: name PVCs/],
    [
      'In without values',
      { selector: { matchExpressions: [{ key: 'a', operator: 'In' }] } },
      /matchExpressions\[0\]\.values: must not be empty for In/,
    ],
    [
      'a retention count below zero',
      { retention: { keepDaily: -1 } },
      /^spec\.retention\.keepDaily: must be at least 0/,
    ],
    ['an expiry in words', { expire: 'a month' }, /^spec\.expire: must be a duration/],
    [
      'an unknown concurrency policy',
      { concurrencyPolicy: 'Queue' as 'Allow' },
      /^spec\.concurrencyPolicy: must be one of Allow, Forbid, Replace/,
    ],
  ];
  for (const [name, spec, message] of denied) {
    it(`denies ${name}, naming the field`, async () => {
      const w = scheduleWorld();
      const response = await answer(w, review('CREATE', schedule(spec)));
      assert.equal(response.allowed, false);
      assert.match(response.status!.message, message);
      assert.equal(jobs(w.kube).length, 0);
    });
  }

  it('allows a valid schedule and starts its reconcile Job from the template, once per generation', async () => {
    const w = scheduleWorld();
    const s = schedule({ timeZone: 'Europe/Berlin', selector: { matchLabels: { backup: 'yes' } } });
    assert.equal((await answer(w, review('CREATE', s))).allowed, true);
    w.kube.seed(s);
    await w.settle();
    const [job] = jobs(w.kube);
    assert.equal(job.metadata.name, 'ferry-sched-abcdef0123454000-g1');
    assert.equal(job.metadata.namespace, ferryNamespace);
    const container = (job.spec as any).template.spec.containers[0];
    assert.deepEqual(container.args, ['schedule', 'BackupSchedule/app/nightly']);
    assert.equal((job.spec as any).template.spec.serviceAccountName, 'ferry-step-schedule');
    // a status write or a metadata change keeps the generation: no new Job
    await answer(w, review('UPDATE', { ...s, status: { observedGeneration: 1 } }, { old: s, subResource: 'status' }));
    const relabelled = { ...s, metadata: { ...s.metadata, labels: { a: 'b' } } };
    await answer(w, review('UPDATE', relabelled, { old: s }));
    await w.kube.replace(relabelled);
    await w.settle();
    assert.equal(jobs(w.kube).length, 1);
    const suspended = {
      ...relabelled,
      metadata: { ...relabelled.metadata, generation: 2 },
      spec: { ...s.spec, suspend: true },
    };
    assert.equal((await answer(w, review('UPDATE', suspended, { old: relabelled }))).allowed, true);
    await w.kube.replace(suspended);
    await w.settle();
    assert.deepEqual(
      jobs(w.kube)
        .map((j) => j.metadata.name)
        .sort(),
      ['ferry-sched-abcdef0123454000-g1', 'ferry-sched-abcdef0123454000-g2'],
    );
  });

  it('does nothing on a dry run', async () => {
    const w = scheduleWorld();
    assert.equal((await answer(w, review('CREATE', schedule(), { dryRun: true }))).allowed, true);
    assert.equal(jobs(w.kube).length, 0);
  });

  it('the sweep starts the reconcile of a generation nobody observed, and only that', async () => {
    const w = scheduleWorld();
    const seen = schedule({}, { name: 'seen', uid: 'bbbbbbbb-0000-4000-8000-000000000000' });
    w.kube.seed(schedule(), { ...seen, status: { observedGeneration: 1 } });
    const result = await sweepSchedules({ kube: w.kube, namespace: ferryNamespace });
    assert.deepEqual(result, { started: ['BackupSchedule app/nightly'], errors: [] });
    assert.deepEqual((await sweepSchedules({ kube: w.kube, namespace: ferryNamespace })).started, []);
  });

  it('deleting a schedule keeps its backups, unless annotated ferry.dev/delete-backups: "true"', async () => {
    const w = scheduleWorld();
    const mine = upload('nightly-data-202501010000', 'Completed');
    mine.metadata.labels = { 'ferry.dev/schedule': 'nightly' };
    const other = upload('other-data-202501010000', 'Completed');
    other.metadata.labels = { 'ferry.dev/schedule': 'other' };
    const appBackup = (name: string, schedule: string): KubeObject => ({
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'AppBackup',
      metadata: { name, namespace: 'app', labels: { 'ferry.dev/schedule': schedule } },
      spec: { pvcs: ['data'], backupStorageLocation: 'default' },
      status: { phase: 'Completed' },
    });
    w.kube.seed(
      mine,
      other,
      appBackup('nightly-app-202501010000', 'nightly'),
      appBackup('other-app-202501010000', 'other'),
    );
    const key = { kind: 'BackupSchedule' as const, namespace: 'app', name: 'nightly' };
    w.kube.seed(schedule());
    await answer(w, review('DELETE', undefined, { old: schedule() }));
    await w.kube.delete(key);
    await w.settle();
    assert.equal(w.kube.all('DataUpload').length, 2);
    assert.equal(w.kube.all('AppBackup').length, 2);
    const annotated = schedule({}, { annotations: { 'ferry.dev/delete-backups': 'true' } });
    w.kube.seed(annotated);
    await answer(w, review('DELETE', undefined, { old: annotated }));
    await w.kube.delete(key);
    await w.settle();
    assert.deepEqual(
      w.kube.all('DataUpload').map((d) => d.metadata.name),
      ['other-data-202501010000'],
    );
    assert.deepEqual(
      w.kube.all('AppBackup').map((d) => d.metadata.name),
      ['other-app-202501010000'],
    );
  });
});
