import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataDownload, DataUpload } from '../../../src/shared/api/types.ts';
import { finalizerName } from '../../../src/shared/api/phases.ts';
import type { Backend } from '../../../src/engine/backend/backend.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { repositoryPassword } from '../../../src/shared/location/repository.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { listSnapshots } from '../../../src/engine/repository/snapshots.ts';
import { deleteData } from '../../../src/steps/data/delete.ts';
import { runOne } from '../../../src/steps/data/run.ts';
import { transfer } from '../../../src/steps/data/transfer.ts';
import { randomBytes } from '../../support/repo.ts';
import { dataDownload, dataUpload, eventsOf, harness, location } from './harness.ts';

const scratch = await mkdtemp(join(tmpdir(), 'ferry-delete-'));
after(() => rm(scratch, { recursive: true, force: true }));
const repoLocation = 's3:http://127.0.0.1:9/ferry/test/app';
const ref = { kind: 'DataUpload' as const, namespace: 'app', name: 'du-1' };

async function packBytes(backend: Backend): Promise<number> {
  let total = 0;
  for await (const f of backend.list('pack')) total += f.size;
  return total;
}

/** Two DataUploads of one PVC sharing most data; returns the shared bucket and both snapshot ids. */
async function twoBackups(): Promise<{ backends: Map<string, Backend>; ids: string[] }> {
  const volume = join(scratch, 'volume');
  await mkdir(volume, { recursive: true });
  await writeFile(join(volume, 'shared'), randomBytes(2 * 1024 * 1024, 1));
  const backends = new Map<string, Backend>();
  const ids: string[] = [];
  for (const uid of ['uid-first', 'uid-second']) {
    if (uid === 'uid-second') await writeFile(join(volume, 'unique'), randomBytes(1024 * 1024, 2));
    const h = harness('transfer', { volumePath: volume, devicePath: join(scratch, 'none') });
    for (const [k, v] of backends) h.backends.set(k, v);
    const du = dataUpload({}, { phase: 'Prepared', volumeMode: 'Filesystem' });
    du.metadata.uid = uid;
    h.kube.seed(du, ...location());
    await runOne(h.ctx, transfer, ref);
    for (const [k, v] of h.backends) backends.set(k, v);
    ids.push(h.kube.peek<DataUpload & KubeObject>(ref)!.status!.snapshotID!);
  }
  return { backends, ids };
}

function deleting(uid: string, snapshotID: string): DataUpload & KubeObject {
  const du = dataUpload({}, { phase: 'Completed', snapshotID });
  du.metadata.uid = uid;
  du.metadata.finalizers = [finalizerName, 'example.com/keep'];
  du.metadata.deletionTimestamp = '2026-03-01T11:00:00Z';
  return du;
}

test('forgets the snapshot, frees only its unique data, then removes the finalizer', async () => {
  const { backends, ids } = await twoBackups();
  const backend = backends.get(repoLocation)!;
  const before = await packBytes(backend);
  const h = harness('delete');
  for (const [k, v] of backends) h.backends.set(k, v);
  h.kube.seed(deleting('uid-second', ids[1]), ...location());
  const out = await runOne(h.ctx, deleteData, ref);
  assert.equal(out.outcome, 'Advanced', out.reason);
  const repo = await Repository.open(backend, repositoryPassword('location secret', 'app'));
  assert.deepEqual(
    (await listSnapshots(repo)).map((e) => e.id),
    [ids[0]],
  );
  const freed = before - (await packBytes(backend));
  assert.ok(
    freed > 900 * 1024 && freed < 1600 * 1024,
    `freed ${freed} bytes; the unique file was 1 MiB of random data`,
  );
  assert.deepEqual(h.kube.peek<DataUpload & KubeObject>(ref)!.metadata.finalizers, ['example.com/keep']);
  assert.deepEqual(
    eventsOf(h.kube).map((e) => e.reason),
    ['RepositoryDataDeleted'],
  );
  assert.equal(out.counters?.snapshotsForgotten, 1);
});

test('a DataUpload that never moved data (no repository) just loses its finalizer', async () => {
  const h = harness('delete');
  const du = deleting('uid-x', '');
  delete du.status!.snapshotID;
  du.metadata.finalizers = [finalizerName];
  h.kube.seed(du, ...location());
  await runOne(h.ctx, deleteData, ref);
  assert.equal(h.kube.peek(ref), undefined, 'with its last finalizer gone the resource is deleted');
});

test('a failure leaves the finalizer, says why in status and an Event, and is thrown for a retry', async () => {
  const h = harness('delete');
  const [bsl] = location();
  h.kube.seed(deleting('uid-y', 'a'.repeat(64)), bsl);
  await assert.rejects(runOne(h.ctx, deleteData, ref), /The credentials Secret "s3" does not exist/);
  const du = h.kube.peek<DataUpload & KubeObject>(ref)!;
  assert.ok(du.metadata.finalizers?.includes(finalizerName));
  assert.match(
    du.status!.message!,
    /^Could not delete the repository data: The credentials Secret "s3" does not exist in namespace ferry-system\. The finalizer stays/,
  );
  assert.equal(du.status?.conditions?.find((c) => c.type === 'RepositoryDataDeleted')?.status, 'False');
  assert.equal(du.status?.steps?.delete?.outcome, 'Failed');
  assert.deepEqual(
    eventsOf(h.kube).map((e) => [e.reason, e.type]),
    [['DeleteFailed', 'Warning']],
  );
  assert.equal(du.status?.phase, 'Completed', 'the phase stays terminal');
});

test('with its storage location gone the finalizer is released with a Warning, so the namespace can go', async () => {
  const h = harness('delete');
  h.kube.seed(deleting('uid-z', 'a'.repeat(64)));
  assert.equal((await runOne(h.ctx, deleteData, ref)).outcome, 'Advanced');
  assert.deepEqual(h.kube.peek<DataUpload & KubeObject>(ref)!.metadata.finalizers, ['example.com/keep']);
  assert.deepEqual(
    eventsOf(h.kube).map((e) => [e.reason, e.type]),
    [['RepositoryDataKept', 'Warning']],
  );
});

test('the CSI snapshot a block backup kept for the next one goes with it, storage snapshot included', async () => {
  const h = harness('delete');
  const du = deleting('uid-k', 'a'.repeat(64));
  du.status!.changeTracking = { driver: 'local.csi.ferry.dev', snapshotHandle: 'snap-k', retainedContent: 'content-k' };
  h.kube.seed(du, {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotContent',
    metadata: {
      name: 'content-k',
      finalizers: ['snapshot.storage.kubernetes.io/volumesnapshotcontent-bound-protection'],
    },
    spec: { deletionPolicy: 'Retain' },
  });
  assert.equal((await runOne(h.ctx, deleteData, ref)).outcome, 'Advanced');
  const content = h.kube.peek<KubeObject>({ kind: 'VolumeSnapshotContent', name: 'content-k' })!;
  // the snapshotter deletes the storage snapshot for a Delete policy, then lets the content go
  assert.equal((content.spec as { deletionPolicy: string }).deletionPolicy, 'Delete');
  assert.ok(content.metadata.deletionTimestamp, 'the content is being deleted');
});

/** A restore in another namespace (staging) reading du-1 of namespace app, by name or by snapshot ID. */
function readers(snapshotID: string): Record<string, DataDownload & KubeObject> {
  const byName = dataDownload({ source: { dataUpload: { name: 'du-1', namespace: 'app' } } }, { phase: 'InProgress' });
  const byID = dataDownload({ source: { snapshotID }, sourceNamespace: 'app' }, { phase: 'Prepared' });
  for (const dd of [byName, byID]) dd.metadata.namespace = 'staging';
  return { byName, byID };
}

const waiting =
  'Waiting: DataDownload staging/dd-1 is reading this backup; the finalizer stays and the sweep tries again.';

for (const [how, pick] of [
  ['by DataUpload name', 'byName'],
  ['by snapshot ID', 'byID'],
] as const) {
  test(`a restore in another namespace reading the backup ${how} holds the deletion: nothing forgotten, finalizer kept, retried`, async () => {
    const { backends, ids } = await twoBackups();
    const h = harness('delete');
    for (const [k, v] of backends) h.backends.set(k, v);
    const reader = readers(ids[1])[pick];
    h.kube.seed(deleting('uid-second', ids[1]), reader, ...location());
    for (let sweep = 0; sweep < 2; sweep++) {
      const out = await runOne(h.ctx, deleteData, ref);
      assert.equal(out.outcome, 'Waiting', out.reason);
      assert.equal(out.reason, waiting);
    }
    const repo = await Repository.open(backends.get(repoLocation)!, repositoryPassword('location secret', 'app'));
    assert.deepEqual(
      (await listSnapshots(repo)).map((e) => e.id).sort(),
      [...ids].sort(),
      'both snapshots are still there',
    );
    const du = h.kube.peek<DataUpload & KubeObject>(ref)!;
    assert.deepEqual(du.metadata.finalizers, [finalizerName, 'example.com/keep']);
    assert.equal(du.status?.message, waiting);
    assert.equal(du.status?.conditions?.find((c) => c.type === 'RepositoryDataDeleted')?.reason, 'RestoreReading');
    assert.deepEqual(
      eventsOf(h.kube).map((e) => e.reason),
      ['DeleteWaiting'],
      'one Event, not one per retry',
    );

    // the restore ends: the next run deletes
    h.kube.seed({ ...reader, status: { phase: 'Completed' } });
    const out = await runOne(h.ctx, deleteData, ref);
    assert.equal(out.outcome, 'Advanced', out.reason);
    assert.deepEqual(
      (await listSnapshots(repo)).map((e) => e.id),
      [ids[0]],
    );
    assert.deepEqual(h.kube.peek<DataUpload & KubeObject>(ref)!.metadata.finalizers, ['example.com/keep']);
  });
}

test("restores that ended, or read another backup or another namespace's repository, do not hold the deletion", async () => {
  const h = harness('delete');
  const du = deleting('uid-w', 'c'.repeat(64));
  du.metadata.finalizers = [finalizerName];
  const ended = dataDownload({ source: { dataUpload: { name: 'du-1', namespace: 'app' } } }, { phase: 'Failed' });
  const otherBackup = dataDownload(
    { source: { dataUpload: { name: 'du-2', namespace: 'app' } } },
    { phase: 'InProgress' },
  );
  const otherRepo = dataDownload({ source: { snapshotID: 'c'.repeat(64) } }, { phase: 'InProgress' });
  [ended.metadata.name, otherBackup.metadata.name, otherRepo.metadata.name] = ['dd-ended', 'dd-other', 'dd-repo'];
  h.kube.seed(du, ended, otherBackup, otherRepo, ...location());
  const out = await runOne(h.ctx, deleteData, ref);
  assert.equal(out.outcome, 'Advanced', out.reason);
  assert.equal(h.kube.peek(ref), undefined, 'no repository, so only the finalizer held it; now it is gone');
});
