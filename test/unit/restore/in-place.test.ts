// Issue 34: blobs decrypted over the pack read that brought them (no new buffer per blob), and what must not be
// decrypted over: bytes someone else still reads, and blobs an index places over each other. Every plaintext is still
// checked against its own id; an index placing two blobs at one offset is refused instead of handing one blob's
// plaintext to the other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashID } from '../../../src/engine/ids/id.ts';
import { prepareBlob } from '../../../src/engine/pack/prepare.ts';
import { PackReader } from '../../../src/engine/restore/pack-reader.ts';
import { openHere } from '../../../src/engine/restore/open-blobs.ts';
import { ByteBudget } from '../../../src/engine/restore/byte-budget.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { SharedOffsetError } from '../../../src/engine/repository/errors.ts';
import { indexText } from '../../../src/engine/index/index-file.ts';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import type { Handle } from '../../../src/engine/backend/backend.ts';
import { randomBytes, testPassword, testRepo } from '../../support/repo.ts';
import { KeepingBackend } from './counting-backend.ts';
import { openssl } from '../../../src/engine/crypto/openssl.ts';

// decrypting in place is OpenSSL's: a thread binds it once 8 MiB went through the other kernels, these tests at once
assert.ok(openssl(), "Node's OpenSSL cannot be reached");

/** Six blobs of 100 kB, uncompressed, in one pack. */
async function onePack(): Promise<{ repo: Repository; backend: KeepingBackend; blobs: Uint8Array[] }> {
  const backend = new KeepingBackend();
  const repo = await testRepo(backend);
  const writer = repo.writer({ packSize: 4 << 20 });
  const blobs = [1, 2, 3, 4, 5, 6].map((seed) => randomBytes(100_000, seed));
  for (const data of blobs) await writer.add(prepareBlob(repo.key, 'data', hashID(data), data, false), data.length);
  await writer.flush();
  backend.reads = [];
  return { repo, backend, blobs };
}

const locate = (repo: Repository, data: Uint8Array) => repo.index.get(hashID(data), 'data')!;

test("a read's blobs are decrypted over it: its memory and their budget come back once the last is done with", async () => {
  const { repo, backend, blobs } = await onePack();
  const budget = new ByteBudget(8 << 20);
  const reader = new PackReader(repo.backend, openHere(repo), { budget });
  const locs = blobs.map((b) => locate(repo, b));
  const got = await Promise.all(locs.map((loc) => reader.read(loc)));
  assert.equal(backend.reads.length, 1);
  const [read] = backend.reads;
  got.forEach((p, i) => {
    assert.ok(Buffer.from(p).equals(Buffer.from(blobs[i])), `blob ${i} differs`);
    assert.equal(p.buffer, read.buffer, `blob ${i} was not decrypted in place`);
  });
  for (let i = 0; i < got.length - 1; i++) reader.done(locs[i], got[i]);
  assert.ok(read.length > 0 && got.at(-1)!.length === 100_000, 'the read was freed while a blob of it was unwritten');
  assert.equal(budget.tryTake(budget.capacity), false, 'the budget came back while the read was held');
  reader.done(locs.at(-1)!, got.at(-1)!);
  assert.equal(read.length, 0, 'the read was not freed once all its blobs were done with');
  assert.equal(budget.tryTake(budget.capacity), true, 'the budget did not come back');
});

test('a blob also wanted sealed is not decrypted over: the sealed view still holds what the pack stores', async () => {
  const { repo, blobs } = await onePack();
  const reader = new PackReader(repo.backend, openHere(repo));
  const loc = locate(repo, blobs[0]);
  const [sealed, plain, other] = await Promise.all([
    reader.readSealed(loc),
    reader.read(loc),
    reader.read(locate(repo, blobs[1])),
  ]);
  const stored = await repo.backend.load({ type: 'pack', name: loc.pack }, loc.offset, loc.length);
  assert.ok(Buffer.from(sealed).equals(Buffer.from(stored)), 'the sealed blob was decrypted over');
  assert.ok(Buffer.from(plain).equals(Buffer.from(blobs[0])));
  assert.ok(Buffer.from(other).equals(Buffer.from(blobs[1])));
});

/** Hands out pack reads as views of one larger buffer that holds other data too (as Node's pool of small Buffers). */
class SharingBackend extends MemBackend {
  readonly shared = new Uint8Array(1 << 20).fill(7);

  override async load(h: Handle, offset = 0, length = 0, signal?: AbortSignal): Promise<Uint8Array> {
    const data = await super.load(h, offset, length, signal);
    const view = this.shared.subarray(4096, 4096 + data.length);
    view.set(data);
    return view;
  }
}

test('a read that shares its memory with other data is neither decrypted over nor freed with its blob', async () => {
  const backend = new SharingBackend();
  const repo = await testRepo(backend);
  const writer = repo.writer();
  const blob = randomBytes(100_000, 11);
  await writer.add(prepareBlob(repo.key, 'data', hashID(blob), blob, false), blob.length);
  await writer.flush();
  const reader = new PackReader(repo.backend, openHere(repo));
  const loc = locate(repo, blob);
  const plain = await reader.read(loc);
  assert.ok(Buffer.from(plain).equals(Buffer.from(blob)));
  const sealed = Buffer.from(backend.shared.subarray(4096, 4096 + loc.length));
  reader.done(loc, plain);
  assert.equal(backend.shared.length, 1 << 20, 'the shared memory was freed');
  assert.ok(
    backend.shared.subarray(0, 4096).every((b) => b === 7),
    'the other data changed',
  );
  const stored = await MemBackend.prototype.load.call(
    backend,
    { type: 'pack', name: loc.pack },
    loc.offset,
    loc.length,
  );
  assert.ok(sealed.equals(Buffer.from(stored)), 'the read was decrypted over');
});

test('two blobs the index places at one offset: the second is refused, naming both, not handed the first', async () => {
  const { repo, blobs } = await onePack();
  const reader = new PackReader(repo.backend, openHere(repo));
  const real = locate(repo, blobs[0]);
  const lie = { ...real, id: hashID(blobs[1]) };
  const [a, b] = await Promise.allSettled([reader.read(real), reader.read(lie)]);
  assert.ok(a.status === 'fulfilled' && Buffer.from(a.value).equals(Buffer.from(blobs[0])), 'the real blob failed');
  assert.ok(b.status === 'rejected' && b.reason instanceof SharedOffsetError, `the lie was ${b.status}`);
  assert.match(b.reason.message, new RegExp(`blob ${lie.id} at offset ${real.offset} in pack ${real.pack}`));
  assert.match(b.reason.message, new RegExp(`also places blob ${real.id}`));
});

test('an index moving a large file’s second blob onto its first fails the restore; nothing is left or written outside', async () => {
  const work = await mkdtemp(join(tmpdir(), 'ferry-in-place-'));
  try {
    const source = join(work, 'src');
    await mkdir(source);
    await writeFile(join(source, 'big.bin'), randomBytes(6 << 20, 9));
    const backend = new MemBackend();
    const first = await testRepo(backend);
    // one worker stores the file's blobs in its order, so the pack's first two data blobs are the file's first two
    // and the restore asks for both in one read (a second worker's seals land in the pack in any order)
    const { snapshot } = await backup(first, { paths: [source], workers: 1 });
    for await (const id of first.list('index')) {
      const index = JSON.parse(indexText(await first.loadUnpacked('index', id))) as {
        packs: { blobs: { type: string; offset: number; length: number; uncompressed_length?: number }[] }[];
      };
      for (const pack of index.packs) {
        const [one, two] = pack.blobs.filter((b) => b.type === 'data').sort((x, y) => x.offset - y.offset);
        if (!two) continue;
        Object.assign(two, { offset: one.offset, length: one.length, uncompressed_length: one.uncompressed_length });
      }
      await first.saveUnpacked('index', Buffer.from(JSON.stringify(index)));
      await backend.remove({ type: 'index', name: id });
    }
    const repo = await Repository.open(backend, testPassword);
    await repo.loadIndex();
    const parent = join(work, 'parent');
    await mkdir(parent);
    const target = join(parent, 'target');
    await assert.rejects(restoreTree(repo, snapshot.tree, { target, subpath: source }), (err: Error) => {
      assert.match(err.message, /the index places blob [0-9a-f]{64} at offset \d+ in pack [0-9a-f]{64}, where it also/);
      return true;
    });
    assert.deepEqual(await readdir(parent), ['target'], 'the restore wrote outside its target');
    assert.deepEqual(await readdir(target), [], 'the file the lie was about is left behind');
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
