import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdir, mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataDownload, DataUpload } from '../../../src/shared/api/types.ts';
import type { Backend } from '../../../src/engine/backend/backend.ts';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { repositoryPassword } from '../../../src/shared/location/repository.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { listSnapshots } from '../../../src/engine/repository/snapshots.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { runOne } from '../../../src/steps/data/run.ts';
import { transfer } from '../../../src/steps/data/transfer.ts';
import { compareTrees } from '../../support/compare-tree.ts';
import { makeFixtureTree } from '../../support/fixture-tree.ts';
import { randomBytes } from '../../support/repo.ts';
import { dataDownload, dataUpload, harness, location, type Harness } from './harness.ts';

const scratch = await mkdtemp(join(tmpdir(), 'ferry-transfer-'));
after(() => rm(scratch, { recursive: true, force: true }));

const repoLocation = 's3:http://127.0.0.1:9/ferry/test/app';
const duRef = { kind: 'DataUpload' as const, namespace: 'app', name: 'du-1' };
const ddRef = { kind: 'DataDownload' as const, namespace: 'restore', name: 'dd-1' };

async function openRepo(backend: Backend): Promise<Repository> {
  return Repository.open(backend, repositoryPassword('location secret', 'app'));
}

function uploadHarness(
  volume: string,
  backends?: Map<string, Backend>,
  status: DataUpload['status'] = { phase: 'Prepared', volumeMode: 'Filesystem' },
  uid?: string,
): Harness {
  const h = harness('transfer', { volumePath: volume, devicePath: join(volume, '..', 'no-device') });
  if (backends) for (const [k, v] of backends) h.backends.set(k, v);
  const du = dataUpload({ tags: { team: 'a,b' } }, status);
  if (uid) du.metadata.uid = uid;
  h.kube.seed(du, ...location());
  return h;
}

let firstBackup: { backends: Map<string, Backend>; snapshotID: string; source: string };

test('backup: the volume goes into a new repository snapshot, tagged, with stats, node and progress in status', async () => {
  const source = join(scratch, 'volume');
  await makeFixtureTree(source, { smallFiles: 60, bigFile: 2 * 1024 * 1024 });
  await chmod(source, 0o751);
  const h = uploadHarness(source);
  const progress: unknown[] = [];
  h.kube.on('patch', 'DataUpload', (o) => progress.push(structuredClone((o.status as { progress: unknown }).progress)));
  const out = await runOne(h.ctx, transfer, duRef);
  assert.equal(out.outcome, 'Advanced', out.reason);
  const du = h.kube.peek<DataUpload & KubeObject>(duRef)!;
  assert.equal(du.status?.phase, 'Finalizing');
  assert.equal(du.status?.node, 'node-1');
  assert.match(du.status!.snapshotID!, /^[0-9a-f]{64}$/);
  assert.equal(du.status?.parentSnapshotID, undefined);
  assert.ok(du.status!.stats!.files > 60 && du.status!.stats!.bytes > 2 * 1024 * 1024);
  assert.equal(du.status?.progress?.bytesDone, du.status!.stats!.bytes);
  const repo = await openRepo(h.backends.get(repoLocation)!);
  const [entry] = await listSnapshots(repo);
  assert.equal(entry.id, du.status!.snapshotID);
  assert.deepEqual(entry.snapshot.tags, [
    'ferry.dev/namespace=app',
    'ferry.dev/pvc=data',
    `ferry.dev/uid=${du.metadata.uid}`,
    'ferry.dev/dataupload=du-1',
    'team=a_b',
  ]);
  assert.equal(entry.snapshot.hostname, 'data');
  assert.deepEqual(entry.snapshot.paths, [source]);
  assert.ok(
    h.kube.actions.some((a) => a.verb === 'replaceStatus'),
    'phase moves by optimistic status writes',
  );
  firstBackup = { backends: h.backends, snapshotID: entry.id, source };
});

test('backup: the next DataUpload of the same PVC records the last one as its parent and adds little', async () => {
  await writeFile(join(firstBackup.source, 'new-file.txt'), 'one more\n');
  const h = uploadHarness(firstBackup.source, firstBackup.backends, undefined, '0b7c7a2e-1111-4c3e-9f00-00000000000f');
  await runOne(h.ctx, transfer, duRef);
  const du = h.kube.peek<DataUpload & KubeObject>(duRef)!;
  assert.equal(du.status?.parentSnapshotID, firstBackup.snapshotID);
  assert.ok(du.status!.stats!.bytesAdded < 64 * 1024, `added ${du.status!.stats!.bytesAdded} bytes`);
});

test('backup: a run that crashed after saving its snapshot is completed by taking that snapshot', async () => {
  const h = uploadHarness(firstBackup.source, firstBackup.backends, { phase: 'InProgress', volumeMode: 'Filesystem' });
  const before = (await listSnapshots(await openRepo(firstBackup.backends.get(repoLocation)!))).length;
  await runOne(h.ctx, transfer, duRef);
  const du = h.kube.peek<DataUpload & KubeObject>(duRef)!;
  assert.equal(du.status?.phase, 'Finalizing');
  assert.equal(du.status?.snapshotID, firstBackup.snapshotID);
  assert.equal((await listSnapshots(await openRepo(firstBackup.backends.get(repoLocation)!))).length, before);
});

test('restore: a DataDownload fills the restore volume with identical content and metadata', async () => {
  const target = join(scratch, 'restored');
  await mkdir(target);
  const h = harness('transfer', { volumePath: target, devicePath: join(scratch, 'no-device') });
  for (const [k, v] of firstBackup.backends) h.backends.set(k, v);
  h.kube.seed(
    dataDownload({ sourceNamespace: 'app' }, { phase: 'Prepared', snapshotID: firstBackup.snapshotID }),
    ...location(),
  );
  const out = await runOne(h.ctx, transfer, ddRef);
  assert.equal(out.outcome, 'Advanced', out.reason);
  const dd = h.kube.peek<DataDownload & KubeObject>(ddRef)!;
  assert.equal(dd.status?.phase, 'Finalizing');
  await rm(join(firstBackup.source, 'new-file.txt'));
  assert.deepEqual(await compareTrees(firstBackup.source, target, { ownership: true, sparse: true }), []);
  assert.equal((await stat(target)).mode & 0o7777, 0o751, "the volume root's mode is restored too");
});

test('restore: a resumed restore starts again from an empty volume', async () => {
  const target = join(scratch, 'restored-again');
  await mkdir(target);
  await writeFile(join(target, 'left-by-crash'), 'partial');
  const h = harness('transfer', { volumePath: target, devicePath: join(scratch, 'no-device') });
  for (const [k, v] of firstBackup.backends) h.backends.set(k, v);
  h.kube.seed(
    dataDownload(
      { sourceNamespace: 'app', source: { snapshotID: firstBackup.snapshotID.slice(0, 10) } },
      { phase: 'InProgress' },
    ),
    ...location(),
  );
  await runOne(h.ctx, transfer, ddRef);
  assert.deepEqual(await compareTrees(firstBackup.source, target), []);
});

test('restore of a snapshot that is not in the repository fails the DataDownload', async () => {
  const h = harness('transfer', { volumePath: scratch });
  for (const [k, v] of firstBackup.backends) h.backends.set(k, v);
  h.kube.seed(
    dataDownload({ sourceNamespace: 'app', source: { snapshotID: '0000dead' } }, { phase: 'Prepared' }),
    ...location(),
  );
  await runOne(h.ctx, transfer, ddRef);
  const dd = h.kube.peek<DataDownload & KubeObject>(ddRef)!;
  assert.equal(dd.status?.phase, 'Failing');
  assert.match(dd.status!.message!, /no snapshot id starts with "0000dead"/);
});

/** A bucket whose first pack upload stands still until the transfer aborts, after `whileBlocked` ran. */
class BlockingBackend extends MemBackend {
  blocked = false;
  readonly whileBlocked: () => void;
  constructor(whileBlocked: () => void) {
    super();
    this.whileBlocked = whileBlocked;
  }
  override async save(h: Parameters<MemBackend['save']>[0], data: Uint8Array, signal?: AbortSignal): Promise<void> {
    if (h.type === 'pack' && !this.blocked) {
      this.blocked = true;
      this.whileBlocked();
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, 10_000);
        signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(signal.reason);
          },
          { once: true },
        );
      });
    }
    return super.save(h, data, signal);
  }
}

test('cancel during a backup: it stops within a second, saves no snapshot and moves to Canceling', async () => {
  const source = join(scratch, 'cancel-volume');
  await mkdir(source);
  await writeFile(join(source, 'big'), randomBytes(6 * 1024 * 1024, 9));
  const h = uploadHarness(source);
  h.ctx.settings.pollMs = 50;
  let canceledAt = 0;
  const backend = new BlockingBackend(() => {
    canceledAt = Date.now();
    h.kube.mutate(duRef, (o) => {
      (o.spec as { cancel: boolean }).cancel = true;
    });
  });
  h.backends.set(repoLocation, backend);
  const out = await runOne(h.ctx, transfer, duRef);
  assert.equal(out.outcome, 'Canceled');
  assert.ok(backend.blocked);
  assert.ok(Date.now() - canceledAt < 1500, `stopped ${Date.now() - canceledAt} ms after the cancel`);
  const status = h.kube.peek<DataUpload & KubeObject>(duRef)!.status;
  assert.equal(status?.phase, 'Canceling');
  // what the user reads: the uploaded data is kept for the next backup, which the old "no data was kept" denied
  assert.match(status?.message ?? '', /no snapshot was saved, but the data already uploaded stays in the repository/);
  assert.equal((await listSnapshots(await openRepo(backend))).length, 0);
});

test('two first backups of a namespace racing to create its repository both land in one readable repository', async () => {
  const volume = join(scratch, 'race-volume');
  await mkdir(volume);
  await writeFile(join(volume, 'file'), randomBytes(300_000, 5));
  const shared = new Map<string, Backend>();
  const runs = ['0b7c7a2e-1111-4c3e-9f00-0000000000a1', '0b7c7a2e-1111-4c3e-9f00-0000000000a2'].map((uid) => {
    const h = uploadHarness(volume, undefined, undefined, uid);
    h.ctx.engine.openBackend = (location) => {
      let b = shared.get(location);
      if (!b) shared.set(location, (b = new MemBackend()));
      return b;
    };
    return h;
  });
  const outcomes = await Promise.all(runs.map((h) => runOne(h.ctx, transfer, duRef)));
  assert.deepEqual(
    outcomes.map((o) => o.outcome),
    ['Advanced', 'Advanced'],
    outcomes.map((o) => o.reason).join('; '),
  );
  const backend = shared.get(repoLocation)!;
  const repo = await openRepo(backend);
  const entries = await listSnapshots(repo);
  assert.equal(entries.length, 2);
  await repo.loadIndex();
  for (const e of entries) {
    const target = await mkdtemp(join(scratch, 'race-restore-'));
    await restoreTree(repo, e.snapshot.tree, { target, subpath: volume });
    assert.ok((await readFile(join(target, 'file'))).equals(await readFile(join(volume, 'file'))));
  }
});

let blockBackup: { backends: Map<string, Backend>; snapshotID: string };

test('block volume: streamed as one file, zero ranges cost nothing, restored byte for byte onto a device', async () => {
  const mib = 1024 * 1024;
  const device = join(scratch, 'device.img');
  const fh = await open(device, 'w');
  await fh.write(randomBytes(mib, 21), 0, mib, 0);
  await fh.write(randomBytes(mib, 22), 0, mib, 20 * mib);
  await fh.truncate(24 * mib);
  await fh.close();
  const h = harness('transfer', { devicePath: device, volumePath: join(scratch, 'none') });
  h.kube.seed(dataUpload({}, { phase: 'Prepared', volumeMode: 'Block' }), ...location());
  await runOne(h.ctx, transfer, duRef);
  const du = h.kube.peek<DataUpload & KubeObject>(duRef)!;
  assert.equal(du.status?.phase, 'Finalizing', du.status?.message);
  assert.equal(du.status?.stats?.bytes, 24 * mib);
  assert.ok(du.status!.stats!.bytesStored < 3 * mib, `stored ${du.status!.stats!.bytesStored} bytes for 2 MiB of data`);
  const [entry] = await listSnapshots(await openRepo(h.backends.get(repoLocation)!));
  assert.deepEqual(entry.snapshot.paths, ['/data.img']);

  blockBackup = { backends: h.backends, snapshotID: entry.id };
  const target = join(scratch, 'target.img');
  await writeFile(target, Buffer.alloc(24 * mib));
  const r = harness('transfer', { devicePath: target, volumePath: join(scratch, 'none') });
  for (const [k, v] of h.backends) r.backends.set(k, v);
  r.kube.seed(
    dataDownload({ sourceNamespace: 'app' }, { phase: 'Prepared', snapshotID: du.status!.snapshotID }),
    ...location(),
  );
  await runOne(r.ctx, transfer, ddRef);
  assert.equal(r.kube.peek<DataDownload & KubeObject>(ddRef)!.status?.phase, 'Finalizing');
  assert.ok((await readFile(target)).equals(await readFile(device)));
});

test('a restore volume smaller than the backed-up device, or a snapshot of files onto a device, fails the restore', async () => {
  const small = join(scratch, 'small.img');
  await writeFile(small, Buffer.alloc(1024));
  for (const [backup, message] of [
    [blockBackup, /holds 1024 bytes but the snapshot's volume has 25165824/],
    [firstBackup, /not the single file of a block volume backup/],
  ] as const) {
    const h = harness('transfer', { devicePath: small });
    const snapshotID = backup.snapshotID;
    for (const [k, v] of backup.backends) h.backends.set(k, v);
    h.kube.seed(dataDownload({ sourceNamespace: 'app' }, { phase: 'Prepared', snapshotID }), ...location());
    await runOne(h.ctx, transfer, ddRef);
    const dd = h.kube.peek<DataDownload & KubeObject>(ddRef)!;
    assert.equal(dd.status?.phase, 'Failing');
    assert.match(dd.status!.message!, message);
  }
});
