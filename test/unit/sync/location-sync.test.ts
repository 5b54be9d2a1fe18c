// The backup sync of a location (`ferry-step location-sync`) against real MinIO: the backups another cluster wrote
// appear here as Completed DataUploads a restore can use, and nothing a repository's tags say makes it write
// outside what the location allows or touch a DataUpload it did not make. The kube is the in-memory one.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupStorageLocation, DataUpload } from '../../../src/shared/api/types.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import { forget } from '../../../src/engine/operations/forget.ts';
import { openOrInit, type Repository } from '../../../src/engine/operations/open.ts';
import { openBackend } from '../../../src/engine/operations/storage.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { repositoryLocation, repositoryPassword } from '../../../src/shared/location/repository.ts';
import { runLocationSync } from '../../../src/steps/sync/run.ts';
import { startMinio } from '../../support/minio.ts';
import { locationSecret, minioLocation, onRealStorage } from '../../support/minio-location.ts';
import { randomBytes, testKDF, testPolynomial } from '../../support/repo.ts';
import { ferryNamespace, harness, type Harness } from '../steps/harness.ts';

const scratch = await mkdtemp(join(tmpdir(), 'ferry-sync-'));
const minio = await startMinio();
after(async () => {
  await minio.destroy();
  await rm(scratch, { recursive: true, force: true });
});
const credentials = { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey };
const volume = join(scratch, 'volume');
await mkdir(volume);
await writeFile(join(volume, 'data.bin'), randomBytes(200_000, 1));
const disk = join(scratch, 'disk.img');
await writeFile(disk, randomBytes(300_000, 2));

let buckets = 0;

/** A fresh bucket holding the location "site-a", and a cluster (the harness) that syncs it. */
async function site(over: Partial<BackupStorageLocation['spec']> = {}, lock = false) {
  const bucket = await minio.bucket(`site-${++buckets}`, { objectLock: lock });
  const objects = minioLocation(minio, 'site-a', bucket, { backupSync: {}, ...over });
  const spec = (objects[0] as unknown as BackupStorageLocation).spec;
  const h = onRealStorage(harness('transfer'));
  h.kube.seed(...objects);
  for (const name of ['app', 'other', 'forbidden'])
    h.kube.seed({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const repos: Repository[] = [];
  after(() => Promise.all(repos.map((r) => r.close())));
  return {
    h,
    bucket,
    /** the repository another cluster wrote for `namespace` (tests pass any folder name, as an attacker could) */
    async repository(namespace: string): Promise<Repository> {
      // on an Object Lock bucket the other cluster wrote with retention, as its location said
      const objectLock = lock ? ({ mode: 'GOVERNANCE', retentionMs: 3600_000 } as const) : undefined;
      const backend = openBackend(`${repositoryLocation(spec, 'x').slice(0, -2)}/${namespace}`, {
        s3: { credentials, objectLock },
      });
      const repo = await openOrInit(backend, repositoryPassword(locationSecret, namespace), {
        kdf: testKDF,
        polynomial: testPolynomial,
      });
      repos.push(repo);
      return repo;
    },
  };
}

/** A snapshot as the transfer step of the other cluster tags it (src/steps/data/tags.ts). */
async function backedUp(repo: Repository, namespace: string, name: string, pvc: string, block = false) {
  const tags = [`ferry.dev/namespace=${namespace}`, `ferry.dev/pvc=${pvc}`, `ferry.dev/uid=u-${name}`];
  const r = await backup(repo, {
    paths: [block ? disk : volume],
    stream: block ? { name: `${pvc}.img`, size: 300_000 } : undefined,
    tags: [...tags, `ferry.dev/dataupload=${name}`],
    hostname: pvc,
  });
  return r.snapshotID;
}

function uploads(h: Harness): (DataUpload & KubeObject)[] {
  return h.kube.all('DataUpload') as (DataUpload & KubeObject)[];
}

function syncStatus(h: Harness) {
  return h.kube.peek<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ferryNamespace,
    name: 'site-a',
  })!.status?.sync;
}

test('each backup in the location becomes a Completed DataUpload that names its snapshot', async () => {
  const { h, repository } = await site();
  const repo = await repository('app');
  const fsID = await backedUp(repo, 'app', 'nightly-1', 'data');
  const blockID = await backedUp(repo, 'app', 'disk-1', 'disk', true);
  const out = await runLocationSync(h.ctx, 'site-a');
  assert.equal(out.outcome, 'Advanced', out.reason);
  const byName = new Map(uploads(h).map((d) => [d.metadata.name, d]));
  assert.deepEqual([...byName.keys()].sort(), ['disk-1', 'nightly-1']);
  const fs = byName.get('nightly-1')!;
  assert.equal(fs.metadata.namespace, 'app');
  assert.equal(fs.metadata.annotations?.['ferry.dev/synced-from'], 'site-a');
  assert.equal(fs.metadata.labels?.['ferry.dev/synced'], 'true');
  assert.deepEqual(fs.spec, { sourcePVC: 'data', backupStorageLocation: 'site-a' });
  assert.equal(fs.status?.phase, 'Completed');
  assert.equal(fs.status?.snapshotID, fsID);
  assert.equal(fs.status?.volumeMode, 'Filesystem');
  assert.equal(fs.status?.stats?.bytes, 200_000);
  const when = Date.parse(fs.status!.completionTimestamp!);
  assert.ok(Math.abs(when - Date.now()) < 120_000, fs.status!.completionTimestamp);
  const block = byName.get('disk-1')!;
  assert.equal(block.status?.snapshotID, blockID);
  assert.equal(block.status?.volumeMode, 'Block');
  assert.equal(block.spec.sourcePVC, 'disk');
  assert.equal(block.status?.stats?.bytes, 300_000);
  assert.deepEqual(
    [syncStatus(h)?.found, syncStatus(h)?.created, syncStatus(h)?.deleted],
    [2, 2, 0],
    syncStatus(h)?.message,
  );
  assert.ok(syncStatus(h)?.lastSyncTime);

  // the next run finds them made
  const again = await runLocationSync(h.ctx, 'site-a');
  assert.equal(again.outcome, 'Advanced', again.reason);
  assert.deepEqual([syncStatus(h)?.found, syncStatus(h)?.created], [2, 0]);

  // a backup forgotten at the other site: its DataUpload goes here (the finalizer's delete step forgets nothing more)
  await forget(repo, [fsID]);
  await runLocationSync(h.ctx, 'site-a');
  assert.equal(syncStatus(h)?.deleted, 1);
  const gone = h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'nightly-1' });
  assert.ok(gone?.metadata.deletionTimestamp, 'deleted (held by the finalizer for the delete step)');
  assert.equal(
    h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'disk-1' })?.metadata
      .deletionTimestamp,
    undefined,
  );
});

test('hostile tags and folders create nothing outside what the location allows on this cluster', async () => {
  const { h, repository } = await site({ allowedNamespaces: ['app', 'nowhere'] });
  const repo = await repository('app');
  await backedUp(repo, 'app', '../x', 'data');
  await backedUp(repo, 'app', 'a'.repeat(300), 'data');
  await backedUp(repo, 'app', 'Upper', 'data');
  await backedUp(repo, 'app', 'ok-1', '../../etc');
  await backedUp(repo, 'other', 'from-other', 'data');
  await backedUp(await repository('forbidden'), 'forbidden', 'f-1', 'data');
  await backedUp(await repository('nowhere'), 'nowhere', 'n-1', 'data');
  await backedUp(await repository('other'), 'other', 'o-1', 'data');
  const out = await runLocationSync(h.ctx, 'site-a');
  assert.equal(out.outcome, 'Advanced', out.reason);
  assert.deepEqual(uploads(h), [], 'no DataUpload anywhere');
  const creates = h.kube.actions.filter((a) => a.verb === 'create');
  assert.deepEqual(creates, []);
  const message = syncStatus(h)?.message ?? '';
  for (const why of [
    'names DataUpload "../x", not a valid object name',
    'not a valid object name',
    'names no valid PVC',
    'belongs to namespace "other"',
    'namespace forbidden is not allowed by the location',
  ])
    assert.ok(message.includes(why), `${why} in: ${message}`);
  assert.equal(syncStatus(h)?.found, 0);
});

test("a user's DataUpload of the same name is left as it is, and said so", async () => {
  const { h, repository } = await site();
  await backedUp(await repository('app'), 'app', 'nightly-1', 'data');
  const mine: DataUpload & KubeObject = {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name: 'nightly-1', namespace: 'app', uid: 'u-mine' },
    spec: { sourcePVC: 'mine', backupStorageLocation: 'local' },
    status: { phase: 'Failed', message: 'my own' },
  };
  h.kube.seed(mine);
  const before = h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'nightly-1' })!;
  await runLocationSync(h.ctx, 'site-a');
  const after = h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'nightly-1' })!;
  assert.deepEqual(after, before, 'not overwritten, not deleted');
  assert.match(syncStatus(h)?.message ?? '', /DataUpload app\/nightly-1 exists and was not synced from this location/);
  // nor is it deleted when the backup goes
  assert.equal(syncStatus(h)?.created, 0);
});

test('recovery mode: backups whose objects were all deleted still appear', async () => {
  const { h, bucket, repository } = await site({ recoverVersions: true }, true);
  const id = await backedUp(await repository('app'), 'app', 'nightly-1', 'data');
  // the attacker, with the location's own credentials: every object gets a delete marker
  const listed = await minio.client.send(new ListObjectsV2Command({ Bucket: bucket }));
  for (const o of listed.Contents ?? [])
    await minio.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: o.Key }));
  const out = await runLocationSync(h.ctx, 'site-a');
  assert.equal(out.outcome, 'Advanced', out.reason);
  assert.deepEqual(
    uploads(h).map((d) => [d.metadata.namespace, d.metadata.name, d.status?.snapshotID]),
    [['app', 'nightly-1', id]],
    out.reason,
  );
});

test('a location without spec.backupSync is not synced', async () => {
  const { h } = await site({ backupSync: undefined });
  const out = await runLocationSync(h.ctx, 'site-a');
  assert.equal(out.outcome, 'Skipped');
  assert.match(out.reason, /no spec\.backupSync/);
});

test('a repository that cannot be read deletes nothing: its synced DataUploads stay', async () => {
  const { h, bucket } = await site();
  // a repository under the namespace's folder that this location's password does not open
  const foreign = openBackend(`s3:${minio.endpoint}/${bucket}/site/app`, { s3: { credentials } });
  const repo = await openOrInit(foreign, 'not the derived password', { kdf: testKDF, polynomial: testPolynomial });
  await repo.close();
  const kept: DataUpload & KubeObject = {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: {
      name: 'synced-before',
      namespace: 'app',
      uid: 'u-before',
      annotations: { 'ferry.dev/synced-from': 'site-a' },
      labels: { 'ferry.dev/synced': 'true' },
    },
    spec: { sourcePVC: 'data', backupStorageLocation: 'site-a' },
    status: { phase: 'Completed', snapshotID: 'cd'.repeat(32) },
  };
  h.kube.seed(kept);
  const out = await runLocationSync(h.ctx, 'site-a');
  assert.equal(out.outcome, 'Failed');
  assert.match(syncStatus(h)?.message ?? '', /the repository of namespace app could not be read/);
  const after = h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'synced-before' })!;
  assert.equal(after.metadata.deletionTimestamp, undefined);
  assert.equal(syncStatus(h)?.deleted, 0);
});
