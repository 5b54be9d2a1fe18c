// Object Lock and recovery mode in the steps: every step opens a location's repositories as its spec says. A backup
// into an Object Lock location (real MinIO bucket created with Object Lock) leaves its objects retained, and a later
// backup that reuses the data extends the retention of what it needs; a location in recovery mode (spec.recoverVersions)
// serves a restore's read and refuses every step that would write, naming the field.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupStorageLocation, DataUpload } from '../../../src/shared/api/types.ts';
import type { OpenOptions } from '../../../src/engine/operations/storage.ts';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { initRepository } from '../../../src/engine/operations/open.ts';
import { openBackend } from '../../../src/engine/operations/storage.ts';
import { repositoryPassword } from '../../../src/shared/location/repository.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { runOne } from '../../../src/steps/data/run.ts';
import { transfer } from '../../../src/steps/data/transfer.ts';
import { deleteData } from '../../../src/steps/data/delete.ts';
import { openRepository } from '../../../src/steps/data/repository.ts';
import { runMaintenance, type MaintenanceContext } from '../../../src/steps/maintenance/run.ts';
import { makeFixtureTree } from '../../support/fixture-tree.ts';
import { randomBytes, testKDF, testPolynomial } from '../../support/repo.ts';
import { startMinio } from '../../support/minio.ts';
import { minioLocation, onRealStorage } from '../../support/minio-location.ts';
import { dataDownload, dataUpload, ferryNamespace, harness, location, type Harness } from './harness.ts';

const scratch = await mkdtemp(join(tmpdir(), 'ferry-step-lock-'));
const minio = await startMinio();
after(async () => {
  await minio.destroy();
  await rm(scratch, { recursive: true, force: true });
});
const bucket = await minio.bucket('immutable', { objectLock: true });
const volume = join(scratch, 'volume');
await makeFixtureTree(volume, { smallFiles: 20, bigFile: 512 * 1024 });

const locationKey = { kind: 'BackupStorageLocation' as const, namespace: ferryNamespace, name: 'default' };

function setRetention(h: Harness, retention: string): void {
  h.kube.mutate(locationKey, (o) => {
    (o as BackupStorageLocation & KubeObject).spec.objectLock = { mode: 'GOVERNANCE', retention };
  });
}

async function backUp(h: Harness, name: string, uid: string): Promise<DataUpload> {
  const du = dataUpload({}, { phase: 'Prepared', volumeMode: 'Filesystem' });
  du.metadata = { ...du.metadata, name, uid };
  h.kube.seed(du);
  const ref = { kind: 'DataUpload' as const, namespace: 'app', name };
  const out = await runOne(h.ctx, transfer, ref);
  assert.equal(out.outcome, 'Advanced', out.reason);
  return h.kube.peek<DataUpload & KubeObject>(ref)!;
}

/** Each pack's key, with the time its retention ends. */
async function packRetainedUntil(): Promise<Map<string, number>> {
  const page = await minio.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: 'site/app/data/' }));
  const until = new Map<string, number>();
  for (const o of page.Contents ?? []) {
    const head = await minio.client.send(new HeadObjectCommand({ Bucket: bucket, Key: o.Key }));
    until.set(o.Key!, head.ObjectLockRetainUntilDate?.getTime() ?? 0);
  }
  return until;
}

test('a backup into an Object Lock location retains its objects, and the next backup extends what it reuses', async () => {
  const h = onRealStorage(harness('transfer', { volumePath: volume, devicePath: join(scratch, 'no-device') }));
  h.kube.seed(...minioLocation(minio, 'default', bucket));
  setRetention(h, '60s');
  await backUp(h, 'du-1', '0b7c7a2e-1111-4c3e-9f00-000000000001');
  const first = await packRetainedUntil();
  assert.ok(first.size > 0, 'the backup wrote packs');
  for (const until of first.values()) assert.ok(until > Date.now() + 30_000, `a pack retained only until ${until}`);

  // the same data again under a longer period: no pack is new, yet each must now be held as long as this backup
  setRetention(h, '720h');
  await backUp(h, 'du-2', '0b7c7a2e-1111-4c3e-9f00-000000000002');
  // every pack of the first backup is held as long as this one needs it (one CI run saw the second backup add a
  // pack as well, which its own write retains; the claim here is about the packs it reused)
  const second = await packRetainedUntil();
  assert.deepEqual(
    [...first.keys()].filter((key) => !second.has(key)),
    [],
    'the packs of the first backup are still there',
  );
  for (const until of [...first.keys()].map((key) => second.get(key)!))
    assert.ok(until > Date.now() + 700 * 3600_000, `a pack the kept snapshots need is retained only until ${until}`);

  // the delete step cannot remove a retained snapshot and says so; the finalizer goes all the same
  const ref = { kind: 'DataUpload' as const, namespace: 'app', name: 'du-1' };
  h.kube.mutate(ref, (o) => {
    o.metadata.deletionTimestamp = new Date().toISOString();
    o.metadata.finalizers = ['ferry.dev/data'];
    (o as DataUpload & KubeObject).status!.phase = 'Completed';
  });
  const deleted = await deleteData(h.ctx, h.kube.peek<DataUpload & KubeObject>(ref)!);
  assert.equal(deleted.outcome, 'Advanced', deleted.reason);
  assert.match(deleted.reason, /stay until their S3 Object Lock retention ends/);
  assert.deepEqual(
    [...(await packRetainedUntil()).keys()],
    [...second.keys()],
    'the delete step left every retained pack',
  );

  // an interrupted backup's pack, written under the policy: prune cannot free it yet, and the run says how many stay
  const backend = openBackend(`s3:${minio.endpoint}/${bucket}/site/app`, {
    s3: {
      credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey },
      objectLock: { mode: 'GOVERNANCE', retentionMs: 3600_000 },
    },
  });
  const orphan = randomBytes(4096, 7);
  await backend.save({ type: 'pack', name: createHash('sha256').update(orphan).digest('hex') }, orphan);
  await backend.close();
  const out = await runMaintenance(h.ctx as MaintenanceContext, { mode: 'run', location: 'default', task: 'prune' });
  assert.equal(out.outcome, 'Advanced', out.reason);
  const bsl = h.kube.peek<BackupStorageLocation & KubeObject>(locationKey)!;
  const [run] = bsl.status!.maintenance!.repositories!.find((r) => r.namespace === 'app')!.runs;
  assert.ok((run.filesRetained ?? 0) >= 1, JSON.stringify(run));
  assert.match(run.message ?? '', /stay while S3 Object Lock retains them/);
  assert.equal((await packRetainedUntil()).size, second.size + 1, 'the retained orphan stays');
});

/** A harness over in-memory storage that records the options each repository is opened with. */
function recording(spec: Partial<BackupStorageLocation['spec']>): {
  h: Harness;
  opened: OpenOptions[];
  mem: MemBackend;
} {
  const h = harness('transfer');
  const opened: OpenOptions[] = [];
  const mem = new MemBackend();
  h.ctx.engine = { ...h.ctx.engine, openBackend: (_location, opts) => (opened.push(opts), mem) };
  const [bsl, ...secrets] = location();
  h.kube.seed({ ...bsl, spec: { ...(bsl.spec as object), ...spec } } as KubeObject, ...secrets);
  return { h, opened, mem };
}

test('each step opens an Object Lock location with its policy', async () => {
  const { h, opened } = recording({ objectLock: { mode: 'COMPLIANCE', retention: '30d' } });
  for (const r of [dataUpload(), dataDownload({ sourceNamespace: 'app' })])
    await (await openRepository(h.ctx, r, true)).close();
  const policy = { mode: 'COMPLIANCE', retentionMs: 30 * 24 * 3600_000 };
  assert.deepEqual(
    opened.map((o) => o.s3?.objectLock),
    [policy, policy],
  );
});

test('recovery mode: a restore reads the object versions, a backup or a delete is refused naming the field', async () => {
  const { h, opened, mem } = recording({ recoverVersions: true });
  await initRepository(mem, repositoryPassword('location secret', 'restore'), {
    kdf: testKDF,
    polynomial: testPolynomial,
  });
  await (await openRepository(h.ctx, dataDownload(), false)).close();
  assert.equal(opened[0].s3?.recoverVersions, true);
  for (const create of [true, false])
    await assert.rejects(
      openRepository(h.ctx, dataUpload(), create),
      /BackupStorageLocation "default" has spec\.recoverVersions set: .*nothing may be written there/,
    );
  assert.equal(opened.length, 1, 'nothing was opened for writing');
});

test("recovery mode: deleting a synced backup here keeps the other cluster's data; another backup waits", async () => {
  const { h, opened } = recording({ recoverVersions: true });
  const deleted = (annotations: Record<string, string>) => {
    const du = dataUpload({}, { phase: 'Completed', snapshotID: 'ab'.repeat(32) });
    du.metadata = {
      ...du.metadata,
      annotations,
      deletionTimestamp: '2026-03-01T12:00:00Z',
      finalizers: ['ferry.dev/delete-repository-data'],
    };
    return du;
  };
  const synced = deleted({ 'ferry.dev/synced-from': 'default' });
  h.kube.seed(synced);
  const out = await deleteData(h.ctx, synced);
  assert.equal(out.outcome, 'Advanced', out.reason);
  assert.match(out.reason, /read only \(spec\.recoverVersions\), so synced snapshot abababab stays in its bucket/);
  assert.deepEqual(opened, [], 'the repository was not opened');

  const own = { ...deleted({}), metadata: { ...deleted({}).metadata, name: 'du-own' } };
  h.kube.seed(own);
  await assert.rejects(deleteData(h.ctx, own), /spec\.recoverVersions set/);
  const kept = h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'du-own' })!;
  assert.deepEqual(kept.metadata.finalizers, ['ferry.dev/delete-repository-data']);
});
