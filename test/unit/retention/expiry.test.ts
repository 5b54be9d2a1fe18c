// Expiry: which DataUploads the sweep deletes, and the cases it must leave alone.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { expireUploads, expiryVerdict } from '../../../src/dispatcher/expiry.ts';
import type { DataUpload } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { download, upload } from '../dispatcher/world.ts';

const created = '2025-01-01T00:00:00Z';
const hour = 3_600_000;
const now = Date.parse(created) + 2 * hour;

function du(
  name: string,
  extra: Partial<DataUpload> = {},
  phase: 'Completed' | 'InProgress' = 'Completed',
): KubeObject {
  const r = upload(name, phase, {}, created);
  return { ...r, spec: { ...r.spec, expire: '1h' }, ...extra, metadata: { ...r.metadata, ...extra.metadata } };
}

it('expiry: deletes exactly the expired, finished, unretained, unread DataUploads', async () => {
  const kube = new MemoryKube();
  const reader = download('restore', 'InProgress', {
    spec: {
      targetPVC: { name: 'x' },
      backupStorageLocation: 'default',
      source: { dataUpload: { name: 'read', namespace: 'app' } },
    },
  });
  kube.seed(
    du('expired'),
    du('later', { spec: { sourcePVC: 'data', backupStorageLocation: 'default', expire: '3h' } }),
    du('forever', { spec: { sourcePVC: 'data', backupStorageLocation: 'default' } }),
    du('retained', { metadata: { name: 'retained', annotations: { 'ferry.dev/retain-if-expired': 'true' } } }),
    du('running', {}, 'InProgress'),
    du('read'),
    reader,
  );
  const result = await expireUploads(kube, now);
  assert.deepEqual(result, { deleted: ['DataUpload app/expired: expired (spec.expire 1h)'], errors: [] });
  assert.deepEqual(
    kube
      .all('DataUpload')
      .map((d) => d.metadata.name)
      .sort(),
    ['forever', 'later', 'read', 'retained', 'running'],
  );
  const verdicts = Object.fromEntries(
    kube
      .all('DataUpload')
      .map((d) => [d.metadata.name, expiryVerdict(d as unknown as DataUpload, [reader as never], now)]),
  );
  assert.deepEqual(verdicts, {
    forever: { expire: false, why: 'no spec.expire' },
    later: { expire: false, why: 'not expired yet' },
    read: { expire: false, why: 'DataDownload other/restore is reading it' },
    retained: { expire: false, why: 'annotated ferry.dev/retain-if-expired' },
    running: { expire: false, why: 'still running' },
  });
  // a second pass deletes nothing more
  assert.deepEqual((await expireUploads(kube, now)).deleted, []);
});
