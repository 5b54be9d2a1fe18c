// Issue 34: a restored file's data ranges are reserved (fallocate) as soon as it is created, so the blobs arriving
// from several packs at once land in blocks already laid out; its holes stay holes, whether they are zero chunks
// (never reserved) or zero pages inside a chunk (punched out of the reservation).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backup } from '../../../src/engine/operations/backup.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { dataRanges, placeBlobs, writeFileContent, isZeroBlob } from '../../../src/engine/restore/file-writer.ts';
import type { BlobLocation } from '../../../src/engine/index/table.ts';
import { decodeTree, findNode } from '../../../src/engine/tree/tree.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-prealloc-'));
test.after(() => rm(work, { recursive: true, force: true }));

const MiB = 1 << 20;

/** Random data with zero ranges: [offset, length] pairs, page aligned. */
function withZeros(size: number, seed: number, zeros: [number, number][]): Buffer {
  const data = Buffer.from(randomBytes(size, seed));
  for (const [at, length] of zeros) data.fill(0, at, at + length);
  return data;
}

/** Bytes of the 4 KiB pages of `data` that are not all zeros: what a file of it needs on disk at least. */
function dataPageBytes(data: Buffer): number {
  let n = 0;
  for (let at = 0; at < data.length; at += 4096) if (data.subarray(at, at + 4096).some((b) => b !== 0)) n += 4096;
  return n;
}

/** Bytes the file system holds for `path` (reserved or written). */
async function onDisk(path: string): Promise<number> {
  return (await stat(path)).blocks * 512;
}

test('a sparse file has its data ranges reserved while blobs are still on their way, and none of its holes', async () => {
  const source = join(work, 'sparse-src');
  await mkdir(source);
  // data, a hole of many zero chunks, data: the last blob is held back until the reservation is looked at
  const data = withZeros(20 * MiB, 3, [[2 * MiB, 16 * MiB]]);
  await writeFile(join(source, 'disk.img'), data);
  const repo = await testRepo();
  const { snapshot } = await backup(repo, { paths: [source] });
  let tree = decodeTree(await repo.loadBlob('tree', snapshot.tree));
  for (const part of source.split('/').filter(Boolean))
    tree = decodeTree(await repo.loadBlob('tree', findNode(tree, Buffer.from(part))!.subtree!));
  const node = findNode(tree, Buffer.from('disk.img'))!;
  const { blobs } = placeBlobs(repo, node.content!);
  assert.ok(blobs.some(isZeroBlob), 'the file should have zero chunks');
  const ranges = dataRanges(blobs);
  assert.ok(ranges.length >= 2, `the data should lie in separate ranges, got ${JSON.stringify(ranges)}`);
  const reservedBytes = ranges.reduce((n, r) => n + r.length, 0);
  assert.ok(reservedBytes < 8 * MiB, `${reservedBytes} bytes of data ranges: the hole is not left out`);

  const last = blobs.findLast((b) => !isZeroBlob(b))!;
  const held = Promise.withResolvers<void>();
  let others = blobs.filter((b) => b !== last && !isZeroBlob(b)).length;
  const othersWritten = Promise.withResolvers<void>();
  const source_ = {
    read: async (loc: BlobLocation) => {
      if (loc.id === last.id && loc.offset === last.loc.offset) await held.promise;
      return repo.loadBlob('data', loc.id);
    },
    done: () => {
      if (--others === 0) othersWritten.resolve();
    },
  };
  const target = join(work, 'sparse.img');
  const writing = writeFileContent(repo, Buffer.from(target), node.content!, source_, () => {});
  await othersWritten.promise;
  const reserved = await onDisk(target);
  held.resolve();
  await writing;
  // without a reservation the last blob's pages would be missing; zero pages of the blobs written are holes again
  assert.ok(
    reserved >= dataPageBytes(data),
    `${reserved} bytes held before the last blob came, ${dataPageBytes(data)} bytes of data pages: not reserved`,
  );
  assert.ok(reserved < reservedBytes + MiB, `${reserved} bytes held for ${reservedBytes} of data: a hole was reserved`);
  assert.ok((await readFile(target)).equals(data), 'the restored file differs');
  assert.ok((await onDisk(target)) < reservedBytes + MiB, 'the finished file lost its holes');
});

test('zero pages inside a chunk stay holes in a preallocated file, zero chunks too, and the bytes are identical', async () => {
  const source = join(work, 'holes-src');
  await mkdir(source);
  // 256 KiB of zeros inside a 3 MiB file: shorter than the smallest chunk, so it lies inside a data blob
  const inner = withZeros(3 * MiB, 5, [[MiB + 64 * 1024, 256 * 1024]]);
  // zero chunks between data, and zeros at the end (the file is extended to its size, not written)
  const sparse = withZeros(12 * MiB, 6, [
    [MiB, 6 * MiB],
    [10 * MiB, 2 * MiB],
  ]);
  const dense = Buffer.from(randomBytes(3 * MiB, 7));
  await writeFile(join(source, 'inner.img'), inner);
  await writeFile(join(source, 'sparse.img'), sparse);
  await writeFile(join(source, 'dense.img'), dense);
  const repo = await testRepo();
  const { snapshot } = await backup(repo, { paths: [source] });
  const target = join(work, 'holes-restored');
  await restoreTree(repo, snapshot.tree, { target, subpath: source });
  for (const [name, want] of [
    ['inner.img', inner],
    ['sparse.img', sparse],
    ['dense.img', dense],
  ] as const)
    assert.ok((await readFile(join(target, name))).equals(want), `${name} differs`);
  const innerHeld = await onDisk(join(target, 'inner.img'));
  // a chunk boundary inside the zeros leaves the page it cuts written
  assert.ok(
    innerHeld <= 3 * MiB - 256 * 1024 + 8192,
    `inner.img holds ${innerHeld} bytes: its zero pages were allocated`,
  );
  const sparseHeld = await onDisk(join(target, 'sparse.img'));
  assert.ok(sparseHeld <= 4 * MiB + 64 * 1024, `sparse.img holds ${sparseHeld} bytes for 4 MiB of data`);
  assert.equal((await stat(join(target, 'sparse.img'))).size, 12 * MiB);
  assert.ok((await onDisk(join(target, 'dense.img'))) >= 3 * MiB, 'dense.img is not all on disk');
});
