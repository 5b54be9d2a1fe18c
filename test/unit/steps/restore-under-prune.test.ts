// A restore and a prune of one repository at once, through the steps: a DataDownload's transfer reading one backup
// while the delete step (or maintenance) frees another backup of the same namespace, whose pack the restore also
// reads. The prune must not repack or delete that pack under the restore: it waits for the restore's shared lock (or
// skips, saying who holds it), and the restore completes with the right bytes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupStorageLocation, DataDownload, DataUpload } from '../../../src/shared/api/types.ts';
import { finalizerName } from '../../../src/shared/api/phases.ts';
import type { Backend } from '../../../src/engine/backend/backend.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { repositoryPassword } from '../../../src/shared/location/repository.ts';
import { lockStore } from '../../../src/engine/repository/lock-store.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { forgetSnapshots, listSnapshots } from '../../../src/engine/repository/snapshots.ts';
import { deleteData } from '../../../src/steps/data/delete.ts';
import { runMaintenance, type MaintenanceContext } from '../../../src/steps/maintenance/run.ts';
import { runOne } from '../../../src/steps/data/run.ts';
import { transfer } from '../../../src/steps/data/transfer.ts';
import { gated } from '../../support/gated-backend.ts';
import { randomBytes } from '../../support/repo.ts';
import { dataDownload, dataUpload, ferryNamespace, harness, location } from './harness.ts';

const scratch = await mkdtemp(join(tmpdir(), 'ferry-restore-prune-'));
after(() => rm(scratch, { recursive: true, force: true }));
const repoLocation = 's3:http://127.0.0.1:9/ferry/test/app';
const duRef = { kind: 'DataUpload' as const, namespace: 'app', name: 'du-1' };
const ddRef = { kind: 'DataDownload' as const, namespace: 'restore', name: 'dd-1' };
const kept = randomBytes(2 << 20, 1);

/**
 * Two backups of one PVC: the first of a file holding `kept` then 6 MiB more, the second of the file cut back to
 * `kept`. The second stores (almost) nothing new: its data lives in the first one's pack, which is mostly unused
 * once the first backup is forgotten, so a prune repacks it and deletes it.
 */
async function backups(): Promise<{ backend: Backend; big: string; small: string }> {
  const volume = join(scratch, 'volume');
  await mkdir(volume, { recursive: true });
  const file = join(volume, 'data');
  await writeFile(file, Buffer.concat([kept, randomBytes(6 << 20, 2)]));
  const backends = new Map<string, Backend>();
  const ids: string[] = [];
  for (const uid of ['uid-big', 'uid-small']) {
    if (uid === 'uid-small') await truncate(file, kept.length);
    const h = harness('transfer', { volumePath: volume, devicePath: join(scratch, 'none') });
    for (const [k, v] of backends) h.backends.set(k, v);
    const du = dataUpload({}, { phase: 'Prepared', volumeMode: 'Filesystem' });
    du.metadata.uid = uid;
    h.kube.seed(du, ...location());
    assert.equal((await runOne(h.ctx, transfer, duRef)).outcome, 'Advanced');
    for (const [k, v] of h.backends) backends.set(k, v);
    ids.push(h.kube.peek<DataUpload & KubeObject>(duRef)!.status!.snapshotID!);
  }
  return { backend: backends.get(repoLocation)!, big: ids[0], small: ids[1] };
}

async function lockCount(backend: Backend): Promise<number> {
  const repo = await Repository.open(backend, repositoryPassword('location secret', 'app'));
  let n = 0;
  for await (const _ of lockStore(repo).list()) n++;
  return n;
}

test('the delete step waits for a DataDownload reading the same repository; the restore gets the right bytes, then the prune frees the data', async () => {
  const { backend, big, small } = await backups();
  const kube = new MemoryKube();
  const doomed = dataUpload({}, { phase: 'Completed', snapshotID: big });
  doomed.metadata.uid = 'uid-big';
  doomed.metadata.finalizers = [finalizerName];
  doomed.metadata.deletionTimestamp = '2026-03-01T11:00:00Z';
  const target = join(scratch, 'restored');
  await mkdir(target);
  kube.seed(doomed, dataDownload({ sourceNamespace: 'app' }, { phase: 'Prepared', snapshotID: small }), ...location());

  const restoring = harness('transfer', { volumePath: target, devicePath: join(scratch, 'none') }, kube);
  const gate = gated(backend);
  restoring.backends.set(repoLocation, gate.view);
  const deleting = harness('delete', { lockWaitMs: 60_000 }, kube);
  deleting.backends.set(repoLocation, backend);

  const restored = runOne(restoring.ctx, transfer, ddRef).then(
    (o) => ({ o, at: Date.now() }),
    (err: Error) => ({ err, at: Date.now() }),
  );
  await gate.reading;
  // the prune starts while the restore is reading; the restore goes on once the prune has waited, or has finished
  let prunedAt = 0;
  const deleted = runOne(deleting.ctx, deleteData, duRef).then((o) => {
    prunedAt = Date.now();
    return o;
  });
  const waiting = new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (deleting.logs.some((l) => l.includes('the repository is locked by'))) resolve();
    }, 20);
    void Promise.race([deleted, restored]).finally(() => clearInterval(poll));
  });
  await Promise.race([waiting, deleted]);
  gate.open();

  const r = await restored;
  assert.ok('o' in r, `the restore failed: ${'err' in r ? r.err.message : ''}`);
  assert.equal(r.o.outcome, 'Advanced', r.o.reason);
  assert.equal(kube.peek<DataDownload & KubeObject>(ddRef)!.status?.phase, 'Finalizing');
  assert.ok(
    Buffer.from(kept).equals(await readFile(join(target, 'data'))),
    'the restored file holds the backed-up bytes',
  );
  assert.match(
    deleting.logs.join('\n'),
    /waiting: the repository is locked by .*a shared lock/,
    'the delete step said who it waited for',
  );

  const out = await deleted;
  assert.equal(out.outcome, 'Advanced', out.reason);
  assert.ok(prunedAt >= r.at, 'the prune finished after the restore');
  assert.ok((out.counters?.packsDeleted ?? 0) > 0, 'the prune deleted the pack the restore had read');
  const repo = await Repository.open(backend, repositoryPassword('location secret', 'app'));
  assert.deepEqual(
    (await listSnapshots(repo)).map((e) => e.id),
    [small],
  );
  assert.equal(await lockCount(backend), 0, 'both steps removed their locks');
});

test('a maintenance prune while a DataDownload reads is skipped, saying why, and the restore gets the right bytes', async () => {
  const { backend, big, small } = await backups();
  const kube = new MemoryKube();
  kube.seed(dataDownload({ sourceNamespace: 'app' }, { phase: 'Prepared', snapshotID: small }), ...location(['app']));
  const target = join(scratch, 'restored-2');
  await mkdir(target);
  await forgetSnapshots(await Repository.open(backend, repositoryPassword('location secret', 'app')), [big]);
  const restoring = harness('transfer', { volumePath: target, devicePath: join(scratch, 'none') }, kube);
  const gate = gated(backend);
  restoring.backends.set(repoLocation, gate.view);
  const maintaining = harness('delete', { lockWaitMs: 0, jobName: 'ferry-maint-prune-default-29000000' }, kube);
  maintaining.backends.set(repoLocation, backend);
  (maintaining.ctx as MaintenanceContext).listFolders = async () => ['app'];

  const restored = runOne(restoring.ctx, transfer, ddRef);
  await gate.reading;
  const pruned = await runMaintenance(maintaining.ctx, { mode: 'run', location: 'default', task: 'prune' });
  gate.open();
  assert.equal((await restored).outcome, 'Advanced');
  assert.ok(
    Buffer.from(kept).equals(await readFile(join(target, 'data'))),
    'the restored file holds the backed-up bytes',
  );
  assert.equal(pruned.outcome, 'Waiting', pruned.reason);
  const [run] = kube.peek<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ferryNamespace,
    name: 'default',
  })!.status!.maintenance!.repositories![0].runs;
  assert.equal(run.outcome, 'Skipped');
  assert.match(run.message!, /a backup or restore is in progress \(a shared lock held by /);
  assert.equal(await lockCount(backend), 0, 'the restore removed its lock, and maintenance left none');
});
