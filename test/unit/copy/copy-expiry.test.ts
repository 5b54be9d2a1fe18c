// Expiry of DataCopies: deleted spec.expire after the copy completed, never before it completed, never a failed or
// canceled one, and only the incarnation the sweep looked at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyExpiryVerdict, expireCopies } from '../../../src/dispatcher/expiry.ts';
import type { CopyPhase, DataCopy } from '../../../src/shared/api/copy.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';

const hour = 3_600_000;
const completed = '2025-01-01T10:00:00Z';
const now = Date.parse(completed) + 2 * hour;

function copy(name: string, phase: CopyPhase | undefined, extra: { expire?: string; done?: string } = {}): DataCopy {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataCopy',
    // created long before: the lifetime counts from the completion, not the creation
    metadata: { name, namespace: 'app', uid: `uid-${name}`, creationTimestamp: '2024-01-01T00:00:00Z' },
    spec: { dataUpload: 'db-1', backupStorageLocation: 'site-b', expire: extra.expire ?? '1h' },
    status: phase ? { phase, completionTimestamp: extra.done ?? completed } : undefined,
  };
}

test('a copy expires spec.expire after its completion, not after its creation', () => {
  assert.deepEqual(copyExpiryVerdict(copy('old', 'Completed'), now), { expire: true });
  assert.deepEqual(copyExpiryVerdict(copy('young', 'Completed', { expire: '3h' }), now), {
    expire: false,
    why: 'not expired yet',
  });
});

test('a copy not completed never expires: running, failed, canceled, or completed without a time', () => {
  for (const phase of ['New', 'InProgress', 'Failed', 'Canceled', undefined] as const)
    assert.equal(copyExpiryVerdict(copy(`c-${phase}`, phase), now).expire, false, `phase ${phase}`);
  const noTime = copy('no-time', 'Completed');
  delete noTime.status!.completionTimestamp;
  assert.equal(copyExpiryVerdict(noTime, now).expire, false);
  const forever = copy('forever', 'Completed');
  delete forever.spec.expire;
  assert.deepEqual(copyExpiryVerdict(forever, now), { expire: false, why: 'no spec.expire' });
});

test('a retained or already deleting copy is left alone', () => {
  const retained = copy('retained', 'Completed');
  retained.metadata.annotations = { 'ferry.dev/retain-if-expired': 'true' };
  assert.equal(copyExpiryVerdict(retained, now).expire, false);
  const deleting = copy('deleting', 'Completed');
  deleting.metadata.deletionTimestamp = completed;
  assert.equal(copyExpiryVerdict(deleting, now).expire, false);
});

test('the sweep’s pass deletes exactly the expired copies', async () => {
  const kube = new MemoryKube();
  kube.seed(
    ...[copy('old', 'Completed'), copy('young', 'Completed', { expire: '3h' }), copy('running', 'InProgress')].map(
      (c) => c as unknown as KubeObject,
    ),
  );
  const result = await expireCopies(kube, now);
  assert.deepEqual(result, { deleted: ['DataCopy app/old: expired (spec.expire 1h)'], errors: [] });
  assert.deepEqual(
    kube.all('DataCopy').map((c) => c.metadata.name),
    ['young', 'running'],
  );
});
