// Issue 7: a single large file restores in parallel, not as one stream: its blobs are asked for at once, several
// ranged pack reads are in flight together, and each blob is written at its offset whatever order it arrives in,
// with no more writes in flight than the restore allows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import type { Handle } from '../../../src/engine/backend/backend.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { writeFileContent } from '../../../src/engine/restore/file-writer.ts';
import { Semaphore } from '../../../src/engine/concurrency/semaphore.ts';
import type { BlobLocation } from '../../../src/engine/index/table.ts';
import { decodeTree, findNode } from '../../../src/engine/tree/tree.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';

/** Pack reads take a while, as over a network, and the most in flight at once is recorded. */
class SlowBackend extends MemBackend {
  inFlight = 0;
  maxInFlight = 0;
  packReads = 0;

  override async load(h: Handle, offset = 0, length = 0, signal?: AbortSignal): Promise<Uint8Array> {
    if (h.type !== 'pack') return super.load(h, offset, length, signal);
    this.packReads++;
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      // later reads answer sooner, so blobs arrive out of file order
      await sleep(Math.max(5, 60 - this.packReads * 5));
      return await super.load(h, offset, length, signal);
    } finally {
      this.inFlight--;
    }
  }
}

/** One file of `size` random bytes in `work`/source, backed up into a fresh repository on `backend`. */
async function backedUpFile(work: string, size: number, seed: number, backend: MemBackend) {
  const source = join(work, 'source');
  const data = randomBytes(size, seed);
  await mkdir(source);
  await writeFile(join(source, 'disk.img'), data);
  const repo = await testRepo(backend);
  const { snapshot } = await backup(repo, { paths: [source] });
  return { source, data, repo, snapshot };
}

test('one 64 MiB file is read by several ranged reads at once and written correctly out of order', async () => {
  const work = await mkdtemp(join(tmpdir(), 'ferry-large-file-'));
  try {
    const backend = new SlowBackend();
    // packs of about 16 MiB, at least three of them more than half a read (a shorter run waits while others are in
    // flight, for requests to join it): at 40 MiB the backup's packers sometimes left a third pack under that
    const { source, data, repo, snapshot } = await backedUpFile(work, 64 << 20, 7, backend);
    const packs = repo.index.packs().length;
    assert.ok(packs >= 3, `the file should span several packs, got ${packs}`);
    backend.packReads = 0;
    const target = join(work, 'target');
    await restoreTree(repo, snapshot.tree, { target });
    assert.ok(Buffer.from(await readFile(join(target, source, 'disk.img'))).equals(data), 'the restored file differs');
    assert.ok(
      backend.maxInFlight >= 3,
      `at most ${backend.maxInFlight} pack read(s) in flight for one file: one stream`,
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});

/** Records the most permits held at once. */
class CountingSemaphore extends Semaphore {
  held = 0;
  maxHeld = 0;

  override async acquire(): Promise<void> {
    await super.acquire();
    this.maxHeld = Math.max(this.maxHeld, ++this.held);
  }

  override release(): void {
    this.held--;
    super.release();
  }
}

/** A file backed up as in backedUpFile, with its node in the snapshot. */
async function backedUpNode(work: string, size: number, seed: number) {
  const { source, data, repo, snapshot } = await backedUpFile(work, size, seed, new MemBackend());
  let tree = decodeTree(await repo.loadBlob('tree', snapshot.tree));
  for (const part of source.split('/').filter(Boolean))
    tree = decodeTree(await repo.loadBlob('tree', findNode(tree, Buffer.from(part))!.subtree!));
  return { data, repo, node: findNode(tree, Buffer.from('disk.img'))! };
}

test('a file whose blobs are all ready is written through the writes bound, and whole', async () => {
  const work = await mkdtemp(join(tmpdir(), 'ferry-large-file-'));
  try {
    const { data, repo, node } = await backedUpNode(work, 12 << 20, 9);
    assert.ok(node.content!.length >= 4, `the file should have several blobs, got ${node.content!.length}`);
    const writes = new CountingSemaphore(2);
    const content = { read: (loc: BlobLocation) => repo.loadBlob('data', loc.id), done: () => {}, writes };
    const target = join(work, 'disk.img');
    await writeFileContent(repo, Buffer.from(target), node.content!, content, () => {});
    assert.equal(writes.maxHeld, 2, 'the writes went past their bound, or never overlapped');
    assert.equal(writes.held, 0);
    assert.ok(Buffer.from(await readFile(target)).equals(data), 'the written file differs');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});

test('each blob of a file is freed as soon as it is written, not left for a collection', async () => {
  const work = await mkdtemp(join(tmpdir(), 'ferry-large-file-'));
  try {
    const { data, repo, node } = await backedUpNode(work, 6 << 20, 11);
    const handed: Uint8Array[] = [];
    const content = {
      read: async (loc: BlobLocation) => {
        const plain = await repo.loadBlob('data', loc.id);
        handed.push(plain);
        return plain;
      },
      done: () => {},
    };
    const target = join(work, 'disk.img');
    await writeFileContent(repo, Buffer.from(target), node.content!, content, () => {});
    assert.ok(Buffer.from(await readFile(target)).equals(data), 'the written file differs');
    assert.equal(handed.length, node.content!.length);
    assert.ok(
      handed.every((b) => b.length === 0),
      'a blob written was not freed',
    );
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
