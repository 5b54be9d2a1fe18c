// CopyPolicies in the dispatcher against an in-memory cluster: a backup turning Completed gets its copy through the
// webhook at once, the sweep makes what a lost call missed and never a second copy, and writes the policy's status.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import { sweep } from '../../../src/dispatcher/sweep.ts';
import type { CopyPolicy, CopyPolicySpec, DataCopy } from '../../../src/shared/api/copy.ts';
import { policyCopyName } from '../../../src/shared/copy/names.ts';
import type { Resource } from '../../../src/shared/dispatch/status.ts';
import { KubeError } from '../../../src/shared/kube/errors.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { ferryNamespace, location, review, upload, world } from '../dispatcher/world.ts';
import type { World } from '../dispatcher/world.ts';

function policy(spec: Partial<CopyPolicySpec> = {}, name = 'offsite'): KubeObject {
  const p: CopyPolicy = {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'CopyPolicy',
    metadata: { name, namespace: ferryNamespace, generation: 3 },
    spec: { sourceLocation: 'default', destinationLocation: 'site-b', ...spec },
  };
  return p as unknown as KubeObject;
}

function copies(w: World): DataCopy[] {
  return w.kube.all('DataCopy') as unknown as DataCopy[];
}

function stored(w: World, name: string): CopyPolicy {
  return w.kube.peek<KubeObject>({ kind: 'CopyPolicy', namespace: ferryNamespace, name }) as unknown as CopyPolicy;
}

const done = { phase: 'Completed', snapshotID: 'a'.repeat(64), completionTimestamp: '2025-01-01T01:00:00Z' } as const;

test('a DataUpload turning Completed gets its copy through the webhook, before any sweep', async () => {
  const w = world();
  w.kube.seed(location('site-b', ['app']), policy());
  const running = upload('db-1', 'InProgress');
  w.kube.seed(running);
  const next = { ...running, status: { ...done } } as Resource;
  const result = await handleReview(review('UPDATE', next, { old: running, subResource: 'status' }), w.handler);
  assert.equal((result as { review: AdmissionReview }).review.response?.allowed, true);
  await w.kube.replaceStatus(next);
  await w.settle();
  assert.deepEqual(
    copies(w).map((c) => [c.metadata.namespace, c.metadata.name, c.spec.backupStorageLocation]),
    [['app', policyCopyName('db-1', 'offsite'), 'site-b']],
  );
});

test('the sweep copies each selected backup once, however often it runs, and writes the policy status', async () => {
  const w = world();
  const other = upload('db-2', 'Completed', { status: { ...done } });
  other.metadata.namespace = 'other';
  w.kube.seed(
    location('site-b', ['app']),
    policy(),
    upload('db-1', 'Completed', { status: { ...done } }),
    upload('db-3', 'InProgress'),
    other,
  );
  const first = await sweep(w.dispatcher);
  assert.deepEqual(first.errors, []);
  assert.deepEqual(first.copied, [`DataCopy app/${policyCopyName('db-1', 'offsite')} (CopyPolicy offsite)`]);
  const second = await sweep(w.dispatcher);
  assert.deepEqual(second.copied, []);
  assert.equal(copies(w).length, 1, 'namespace "other" is not allowed by site-b; db-3 is not Completed');
  const made = copies(w)[0];
  w.kube.mutate({ kind: 'DataCopy', namespace: 'app', name: made.metadata.name }, (c) => {
    c.status = { phase: 'Completed', completionTimestamp: '2025-01-01T01:05:00Z' };
  });
  await sweep(w.dispatcher);
  const status = stored(w, 'offsite').status!;
  assert.equal(status.copiesCompleted, 1);
  assert.equal(status.copiesRetrying, 0);
  assert.equal(status.lastCopyTime, '2025-01-01T01:05:00Z');
  assert.equal(status.observedGeneration, 3);
  assert.equal(status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  // an unchanged status is not written again
  const writes = w.kube.actions.filter((a) => a.kind === 'CopyPolicy' && a.verb === 'patch').length;
  await sweep(w.dispatcher);
  assert.equal(w.kube.actions.filter((a) => a.kind === 'CopyPolicy' && a.verb === 'patch').length, writes);
});

test('a refused create or a missing destination shows in Ready=False and in the sweep’s errors', async () => {
  const w = world();
  w.kube.seed(policy({ destinationLocation: 'nowhere' }, 'lost'), upload('db-1', 'Completed', { status: { ...done } }));
  await sweep(w.dispatcher);
  const lost = stored(w, 'lost').status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(lost.status, 'False');
  assert.match(lost.message ?? '', /spec\.destinationLocation: location "nowhere" does not exist/);
  assert.equal(copies(w).length, 0);

  w.kube.seed(location('site-b', ['*']), policy());
  w.kube.failNext('create', 'DataCopy', new KubeError(422, 'Invalid', 'denied by admission'));
  const report = await sweep(w.dispatcher);
  assert.ok(report.errors.some((e) => e.includes('CopyPolicy offsite: DataUpload app/db-1: denied by admission')));
  assert.equal(stored(w, 'offsite').status!.conditions![0].status, 'False');
});

test('copies waiting for a retry are counted and turn Ready False', async () => {
  const w = world();
  w.kube.seed(location('site-b', ['app']), policy());
  const retrying: DataCopy = {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataCopy',
    metadata: { name: 'c-1', namespace: 'app' },
    spec: { dataUpload: 'db-1', backupStorageLocation: 'site-b', policy: 'offsite' },
    status: { phase: 'InProgress', attempts: 2, nextAttemptTime: '2025-01-01T02:00:00Z' },
  };
  w.kube.seed(retrying as unknown as KubeObject);
  await sweep(w.dispatcher);
  const status = stored(w, 'offsite').status!;
  assert.equal(status.copiesRetrying, 1);
  assert.equal(status.conditions?.[0].reason, 'CopiesRetrying');
});

test('a policy with a malformed spec.expire copies nothing and says so once, in Ready', async () => {
  const w = world();
  w.kube.seed(
    location('site-b', ['app']),
    policy({ expire: '30 days' }),
    upload('db-1', 'Completed', { status: { ...done } }),
    upload('db-2', 'Completed', { status: { ...done } }),
  );
  await sweep(w.dispatcher);
  assert.equal(copies(w).length, 0);
  const ready = stored(w, 'offsite').status!.conditions!.find((c) => c.type === 'Ready')!;
  assert.equal(ready.status, 'False');
  assert.match(ready.message ?? '', /^spec\.expire: "30 days" is not a duration/);
});

test('a CopyPolicy outside ferry’s namespace is nobody’s: it copies nothing', async () => {
  const w = world();
  const stray = policy();
  stray.metadata.namespace = 'app';
  w.kube.seed(location('site-b', ['*']), stray, upload('db-1', 'Completed', { status: { ...done } }));
  const report = await sweep(w.dispatcher);
  assert.deepEqual(report.copied, []);
  assert.equal(copies(w).length, 0);
});
