// The per-location maintenance CronJobs made from the real template in jobs/maintenance.yaml: names that fit, the
// location's schedules (or the defaults), arguments, ownership by the location, and a reconcile that creates what is
// missing, leaves what matches and updates what changed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { BackupStorageLocation } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import {
  cronJobName,
  defaultSchedules,
  desiredCronJob,
  tasks,
  templateCronJob,
} from '../../../src/steps/maintenance/cronjobs.ts';
import { labelValue } from '../../../src/shared/kube/names.ts';
import { runMaintenance } from '../../../src/steps/maintenance/run.ts';
import { ferryNamespace, harness, location } from '../steps/harness.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const template = yaml.load(readFileSync(join(root, 'jobs', 'maintenance.yaml'), 'utf8')) as KubeObject;

function bsl(
  name = 'default',
  maintenance?: BackupStorageLocation['spec']['maintenance'],
): BackupStorageLocation & KubeObject {
  const base = location()[0] as BackupStorageLocation & KubeObject;
  return {
    ...base,
    metadata: { ...base.metadata, name, uid: `uid-${name}` },
    spec: { ...base.spec, ...(maintenance ? { maintenance } : {}) },
  };
}

type Cron = KubeObject & { spec: any };

test('the template is the suspended ferry-step-maintenance CronJob', () => {
  assert.equal(template.metadata.name, templateCronJob);
  assert.equal((template.spec as any).suspend, true);
});

test("a CronJob per task with the location's schedules, its arguments and the location as owner", () => {
  const loc = bsl('default', { prune: { schedule: '15 2 * * *' }, check: { readDataSchedule: '@weekly' } });
  const made = tasks.map((t) => desiredCronJob(template, loc, t) as Cron);
  assert.deepEqual(
    made.map((c) => c.metadata.name),
    ['ferry-maint-prune-default', 'ferry-maint-check-default', 'ferry-maint-check-data-default'],
  );
  assert.deepEqual(
    made.map((c) => c.spec.schedule),
    ['15 2 * * *', defaultSchedules.check, '@weekly'],
  );
  for (const [i, c] of made.entries()) {
    assert.equal(c.metadata.namespace, ferryNamespace);
    assert.equal(c.spec.suspend, false);
    assert.equal(c.spec.concurrencyPolicy, 'Forbid');
    assert.deepEqual(c.metadata.ownerReferences, [
      {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'BackupStorageLocation',
        name: 'default',
        uid: 'uid-default',
        controller: true,
      },
    ]);
    const pod = c.spec.jobTemplate.spec.template;
    assert.deepEqual(pod.spec.containers[0].args, ['maintenance', 'default', tasks[i]]);
    assert.equal(pod.spec.serviceAccountName, 'ferry-step-maintenance');
    // the stale-lock rule finds ferry's pods by this label
    assert.equal(pod.metadata.labels['app.kubernetes.io/name'], 'ferry');
    assert.equal(pod.metadata.labels['ferry.dev/maintenance-task'], tasks[i]);
  }
  assert.equal((desiredCronJob(template, bsl('x', { suspend: true }), 'prune') as Cron).spec.suspend, true);
});

test("the location's two Secrets are volumes of its CronJobs' pods, mounted read-only (the account reads none)", () => {
  const loc = bsl('default');
  const pod = (desiredCronJob(template, loc, 'prune') as Cron).spec.jobTemplate.spec.template.spec;
  const names = [loc.spec.credential.name, loc.spec.repositoryPassword.name];
  assert.deepEqual(
    pod.volumes.filter((v: any) => v.secret).map((v: any) => v.secret.secretName),
    names,
  );
  assert.deepEqual(
    pod.containers[0].volumeMounts
      .filter((m: any) => m.name.startsWith('ferry-secret-'))
      .map((m: any) => [m.mountPath, m.readOnly]),
    names.map((n) => [`/ferry/secrets/${n}`, true]),
  );
});

test("names fit a CronJob (52 characters) and labels fit a label, however long the location's name", () => {
  const long = `backups.${'very-long-name.'.repeat(15)}example`;
  for (const task of tasks) {
    const name = cronJobName(long, task);
    assert.ok(name.length <= 52, name);
    assert.match(name, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    assert.notEqual(name, cronJobName(`${long}2`, task), 'different locations get different names');
  }
  assert.ok(labelValue(long).length <= 63);
  assert.equal(labelValue('default'), 'default');
});

test('reconcile creates the missing CronJobs, leaves matching ones, updates changed ones', async () => {
  const h = harness('delete');
  h.kube.seed(
    { ...template, metadata: { ...template.metadata, namespace: ferryNamespace } },
    ...location(),
    bsl('second'),
  );
  const first = await runMaintenance(h.ctx, { mode: 'reconcile' });
  assert.equal(first.outcome, 'Advanced', first.reason);
  assert.deepEqual(first.counters, { created: 6, updated: 0, deleted: 0, unchanged: 0, errors: 0 });
  const again = await runMaintenance(h.ctx, { mode: 'reconcile' });
  assert.deepEqual(again.counters, { created: 0, updated: 0, deleted: 0, unchanged: 6, errors: 0 });

  const key = { kind: 'BackupStorageLocation' as const, namespace: ferryNamespace, name: 'second' };
  const second = h.kube.peek<BackupStorageLocation & KubeObject>(key)!;
  await h.kube.replace({ ...second, spec: { ...second.spec, maintenance: { check: { schedule: '30 0 * * *' } } } });
  const changed = await runMaintenance(h.ctx, { mode: 'reconcile' });
  assert.deepEqual(changed.counters, { created: 0, updated: 1, deleted: 0, unchanged: 5, errors: 0 });
  const cron = h.kube.peek<Cron>({ kind: 'CronJob', namespace: ferryNamespace, name: 'ferry-maint-check-second' })!;
  assert.equal(cron.spec.schedule, '30 0 * * *');
});

test('reconcile without the template says what to install', async () => {
  const h = harness('delete');
  h.kube.seed(...location());
  await assert.rejects(
    runMaintenance(h.ctx, { mode: 'reconcile' }),
    /template CronJob ferry-system\/ferry-step-maintenance does not exist/,
  );
});

test('a location with spec.backupSync gets its sync CronJob, as its own account; it goes with spec.backupSync', async () => {
  const h = harness('delete');
  const synced = { ...bsl('second'), spec: { ...bsl('second').spec, backupSync: { schedule: '*/5 * * * *' } } };
  h.kube.seed({ ...template, metadata: { ...template.metadata, namespace: ferryNamespace } }, ...location(), synced);
  const first = await runMaintenance(h.ctx, { mode: 'reconcile' });
  assert.equal(first.counters?.created, 7, first.reason);
  const key = { kind: 'CronJob' as const, namespace: ferryNamespace, name: 'ferry-sync-second' };
  const cron = h.kube.peek<Cron>(key)!;
  assert.equal(cron.spec.schedule, '*/5 * * * *');
  assert.equal(cron.spec.suspend, false);
  const pod = cron.spec.jobTemplate.spec.template.spec;
  assert.equal(pod.serviceAccountName, 'ferry-step-sync');
  assert.deepEqual(pod.containers[0].args, ['location-sync', 'second']);
  assert.deepEqual(
    pod.volumes
      .filter((v: { secret?: unknown }) => v.secret)
      .map((v: { secret: { secretName: string } }) => v.secret.secretName),
    ['s3', 'repo'],
  );
  assert.equal(cron.metadata.ownerReferences![0].name, 'second');
  assert.equal(h.kube.peek<Cron>({ ...key, name: 'ferry-sync-default' }), undefined, 'no backupSync, no CronJob');

  // suspended, then the default schedule, then removed
  const lkey = { kind: 'BackupStorageLocation' as const, namespace: ferryNamespace, name: 'second' };
  const set = async (backupSync?: BackupStorageLocation['spec']['backupSync']) => {
    const l = h.kube.peek<BackupStorageLocation & KubeObject>(lkey)!;
    await h.kube.replace({ ...l, spec: { ...l.spec, backupSync } });
    return runMaintenance(h.ctx, { mode: 'reconcile' });
  };
  await set({ suspend: true });
  assert.equal(h.kube.peek<Cron>(key)!.spec.suspend, true);
  assert.equal(h.kube.peek<Cron>(key)!.spec.schedule, '* * * * *');
  // without spec.backupSync it stops and is given to garbage collection: its owner is an object that does not exist
  const removed = await set(undefined);
  assert.equal(removed.counters?.deleted, 1, removed.reason);
  const released = h.kube.peek<Cron>(key)!;
  assert.equal(released.spec.suspend, true);
  const owners = released.metadata.ownerReferences!;
  assert.equal(owners.length, 1);
  assert.notEqual(owners[0].uid, 'uid-second', 'no longer owned by the location');
  assert.equal(
    h.kube.all('BackupStorageLocation').find((l) => l.metadata.uid === owners[0].uid),
    undefined,
    'the owner it names does not exist, so Kubernetes deletes it',
  );
  assert.equal((await runMaintenance(h.ctx, { mode: 'reconcile' })).counters?.deleted, 0);
  assert.ok(
    h.kube.actions.every((a) => a.verb !== 'delete'),
    'the reconcile deletes nothing itself',
  );
});
