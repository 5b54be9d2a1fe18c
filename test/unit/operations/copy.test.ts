// A copy holds a shared lock on both repositories while it works (so a backup may run beside it, a prune may not),
// removes both however it ends, writes no snapshot once a lock is lost, and reads its source a stretch of a pack at
// a time, a few at once, however big the snapshot: its memory does not grow with the data it copies.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend } from '../../../src/engine/backend/backend.ts';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { decodeLock, LockLostError } from '../../../src/engine/lock/lock.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import type { CopyProgress } from '../../../src/engine/copy/copy.ts';
import { copy } from '../../../src/engine/operations/copy.ts';
import { lockStore } from '../../../src/engine/repository/lock-store.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { listSnapshots } from '../../../src/engine/repository/snapshots.ts';
import { gated } from '../../support/gated-backend.ts';
import { randomBytes, testKDF, testPassword, testPolynomial } from '../../support/repo.ts';

const scratch = await mkdtemp(join(tmpdir(), 'ferry-op-copy-'));
after(() => rm(scratch, { recursive: true, force: true }));
const data = join(scratch, 'data');
await mkdir(data);
// 24 MiB in files of 3 MiB, stored in packs of 1 MiB: many more packs than a copy may read at once
for (let i = 0; i < 8; i++) await writeFile(join(data, `f${i}`), randomBytes(3 << 20, i + 1));
const sourceBackend = new MemBackend('mem:source');
const source = await Repository.init(sourceBackend, testPassword, { kdf: testKDF, polynomial: testPolynomial });
await backup(source, { paths: [data], writer: { packSize: 1 << 20 } });

const destinationPassword = 'elsewhere';
async function destination(): Promise<{ backend: MemBackend; repo: Repository }> {
  const backend = new MemBackend('mem:destination');
  return { backend, repo: await Repository.init(backend, destinationPassword, { kdf: testKDF }) };
}

async function locks(backend: Backend, password: string): Promise<boolean[]> {
  const store = lockStore(await Repository.open(backend, password));
  const found: boolean[] = [];
  for await (const id of store.list()) found.push(decodeLock(await store.load(id)).exclusive);
  return found;
}

test('a copy holds a shared lock on the source and on the destination, and removes both at the end', async () => {
  const dst = await destination();
  const gate = gated(sourceBackend);
  const copying = copy(await Repository.open(gate.view, testPassword), dst.repo);
  await gate.reading;
  assert.deepEqual(await locks(sourceBackend, testPassword), [false]);
  assert.deepEqual(await locks(dst.backend, destinationPassword), [false]);
  gate.open();
  assert.equal((await copying).snapshots.length, 1);
  assert.deepEqual(await locks(sourceBackend, testPassword), []);
  assert.deepEqual(await locks(dst.backend, destinationPassword), []);
});

test('a copy whose destination lock is removed under it stops and writes no snapshot', async () => {
  const dst = await destination();
  const gate = gated(sourceBackend);
  const copying = copy(await Repository.open(gate.view, testPassword), dst.repo, { lockRefreshMs: 50 });
  await gate.reading;
  const store = lockStore(await Repository.open(dst.backend, destinationPassword));
  for await (const id of store.list()) await store.remove(id);
  await new Promise((r) => setTimeout(r, 300));
  gate.open();
  await assert.rejects(copying, LockLostError);
  assert.deepEqual(await listSnapshots(await Repository.open(dst.backend, destinationPassword)), []);
  assert.deepEqual(await locks(sourceBackend, testPassword), [], 'the source lock is removed too');
});

test('the source is read a few pack stretches at a time, none over 16 MiB, each stored byte about once, with progress told', async () => {
  let inFlight = 0;
  let most = 0;
  let largest = 0;
  let bytes = 0;
  const counting = new Proxy(sourceBackend, {
    get(target, prop) {
      if (prop !== 'load') {
        const v = Reflect.get(target, prop) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      }
      return async (...args: Parameters<Backend['load']>) => {
        if (args[0].type !== 'pack') return target.load(...args);
        most = Math.max(most, ++inFlight);
        try {
          const got = await target.load(...args);
          largest = Math.max(largest, got.length);
          bytes += got.length;
          return got;
        } finally {
          inFlight--;
        }
      };
    },
  });
  const dst = await destination();
  const seen: CopyProgress[] = [];
  const r = await copy(await Repository.open(counting, testPassword), dst.repo, {
    onProgress: (p) => seen.push({ ...p }),
  });
  assert.ok(r.stats.dataBlobs > 8, `${r.stats.dataBlobs} data blobs copied`);
  // progress is told as the copy goes, and ends at the whole: every queued byte copied, every snapshot done
  assert.ok(seen.length >= 2 && seen[0].bytesDone < seen.at(-1)!.bytesDone, `${seen.length} progress reports`);
  const last = seen.at(-1)!;
  assert.deepEqual(
    [last.bytesDone, last.blobsDone, last.snapshotsDone, last.totalsFinal],
    [last.bytesTotal, r.stats.dataBlobs + r.stats.treeBlobs, 1, true],
  );
  assert.equal(last.bytesDone, r.stats.dataAdded);
  assert.ok(most <= 3, `${most} pack reads at once`);
  assert.ok(largest <= 16 << 20, `a read of ${largest} bytes`);
  // every stored byte of the snapshot is read about once: grouping by pack, not a read per blob of a whole pack
  assert.ok(bytes < 26 << 20, `${bytes} bytes read for 24 MiB of data`);
});

test('many small snapshots copied at once share their packs instead of leaving a small pack each', async () => {
  const small = new MemBackend('mem:small');
  const repo = await Repository.init(small, testPassword, { kdf: testKDF, polynomial: testPolynomial });
  const dir = join(scratch, 'small');
  await mkdir(dir);
  for (let i = 0; i < 12; i++) {
    await writeFile(join(dir, `day-${i}`), randomBytes(20_000, 100 + i));
    await backup(repo, { paths: [dir] });
  }
  const dst = await destination();
  const r = await copy(await Repository.open(small, testPassword), dst.repo);
  assert.equal(r.snapshots.filter((s) => !s.skipped).length, 12);
  assert.ok(r.stats.packs <= 2, `${r.stats.packs} packs for 12 small snapshots`);
  const copied = await listSnapshots(await Repository.open(dst.backend, destinationPassword));
  assert.deepEqual(
    copied.map((e) => e.snapshot.original),
    r.snapshots.map((s) => s.source),
  );
});

test('a copy interrupted after storing packs but before their index resumes without sending them again', async () => {
  const dst = await destination();
  const failingIndex = new Proxy(dst.backend, {
    get(target, prop) {
      const v = Reflect.get(target, prop) as unknown;
      if (prop === 'save') {
        return (...args: Parameters<Backend['save']>) =>
          args[0].type === 'index' ? Promise.reject(new Error('connection lost')) : (target as Backend).save(...args);
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  await assert.rejects(
    copy(await Repository.open(sourceBackend, testPassword), await Repository.open(failingIndex, destinationPassword)),
    /cannot be copied: connection lost/,
  );
  const sent = [];
  for await (const f of dst.backend.list('pack')) sent.push(f.name);
  assert.ok(sent.length >= 2, `${sent.length} packs stored before the failure`);
  const r = await copy(
    await Repository.open(sourceBackend, testPassword),
    await Repository.open(dst.backend, destinationPassword),
  );
  assert.equal(r.adoptedPacks, sent.length);
  assert.deepEqual([r.stats.packs, r.stats.dataBlobs], [0, 0]);
  assert.equal(r.snapshots.length, 1);
});
