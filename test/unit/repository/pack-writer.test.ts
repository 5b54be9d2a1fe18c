import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { hashID } from '../../../src/engine/ids/id.ts';
import { prepareBlob } from '../../../src/engine/pack/prepare.ts';
import { indexText, readIndexFile } from '../../../src/engine/index/index-file.ts';
import { decodeUnpacked } from '../../../src/engine/repository/unpacked.ts';
import { randomBytes, testPassword, testRepo } from '../../support/repo.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import type { PackWriter } from '../../../src/engine/repository/pack-writer.ts';

const kib = 1024;
const mib = 1024 * kib;

/** Stores `count` distinct 16-byte blobs (too small to compress); returns their ids. */
async function addTinyBlobs(repo: Repository, writer: PackWriter, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const data = Buffer.alloc(16);
    data.writeUInt32LE(i);
    const id = hashID(data);
    ids.push(id);
    if (writer.claim('data', id)) await writer.add(prepareBlob(repo.key, 'data', id, data, true), data.length);
  }
  return ids;
}

test('a pack closes before a blob that would overflow its buffer, and at its target size otherwise', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  // target 1 MiB, so buffers of 2 MiB: 900 KiB then 1.5 MiB cannot share one; 3 x 400 KiB close at the target
  const writer = repo.writer({ packSize: mib, uploads: 1 });
  const blobs = [900 * kib, 1.5 * mib, 400 * kib, 400 * kib, 400 * kib].map((size, i) => randomBytes(size, i + 1));
  for (const data of blobs) {
    const id = hashID(data);
    assert.ok(writer.claim('data', id));
    await writer.add(prepareBlob(repo.key, 'data', id, data, true), data.length);
  }
  await writer.flush();
  const sizes: number[] = [];
  for await (const f of backend.list('pack')) sizes.push(f.size);
  sizes.sort((a, b) => a - b);
  assert.equal(sizes.length, 3, `pack sizes ${sizes.join(', ')}`);
  assert.ok(sizes[0] > 900 * kib && sizes[0] < mib, 'the 900 KiB blob closed early, alone');
  assert.ok(sizes[1] > 1.1 * mib && sizes[1] < 1.5 * mib, 'three 400 KiB blobs');
  assert.ok(sizes[2] > 1.5 * mib && sizes[2] < 2 * mib, 'the 1.5 MiB blob');
  for (const data of blobs) assert.ok(Buffer.from(await repo.loadBlob('data', hashID(data))).equals(data));
});

test('a blob counts as stored from its claim on: while prepared, in the open pack, uploading and once indexed', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  let release = (): void => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const save = backend.save.bind(backend);
  backend.save = async (h, data, signal) => {
    if (h.type === 'pack') await gate;
    return save(h, data, signal);
  };
  const writer = repo.writer({ packSize: 64 * kib, uploads: 2 });
  const first = randomBytes(100 * kib, 7);
  const small = randomBytes(100, 8);
  const [firstID, smallID] = [hashID(first), hashID(small)];
  assert.ok(writer.claim('data', smallID));
  assert.ok(writer.has('data', smallID), 'claimed');
  assert.ok(!writer.claim('data', smallID), 'claimed twice');
  await writer.add(prepareBlob(repo.key, 'data', smallID, small, true), small.length);
  assert.ok(writer.has('data', smallID), 'in the open pack');
  assert.ok(!writer.has('tree', smallID), 'the same id as a tree is another blob');
  // a second add of the same blob to the same pack is not appended again
  await writer.add(prepareBlob(repo.key, 'data', smallID, small, true), small.length);
  assert.equal(writer.stats.dataBlobs, 1);
  assert.ok(writer.claim('data', firstID));
  await writer.add(prepareBlob(repo.key, 'data', firstID, first, true), first.length);
  assert.ok(writer.has('data', smallID) && writer.has('data', firstID), 'uploading');
  assert.ok(!repo.index.has(smallID, 'data'), 'not indexed before the pack is stored');
  release();
  await writer.flush();
  assert.ok(repo.index.has(smallID, 'data') && repo.index.has(firstID, 'data'));
  assert.ok(!writer.claim('data', smallID), 'stored');
  const packs: number[] = [];
  for await (const f of backend.list('pack')) packs.push(f.size);
  assert.equal(packs.length, 1);
  assert.ok(Buffer.from(await repo.loadBlob('data', smallID)).equals(small));
  assert.ok(Buffer.from(await repo.loadBlob('data', firstID)).equals(first));
});

test('a pack of tiny blobs closes at its target size header included', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const writer = repo.writer({ packSize: 512 * kib, uploads: 1 });
  // sealed, each takes 48 bytes and its header entry 37 (too small to compress): the header is 40% of the pack
  await addTinyBlobs(repo, writer, 15_000);
  await writer.flush();
  const sizes: number[] = [];
  for await (const f of backend.list('pack')) sizes.push(f.size);
  sizes.sort((a, b) => b - a);
  assert.equal(sizes.length, 3, `pack sizes ${sizes.join(', ')}`);
  assert.ok(sizes[0] <= 512 * kib + 100 && sizes[1] >= 512 * kib, `pack sizes ${sizes.join(', ')}`);
});

test('an index file is written once its packs hold blobsPerIndex blobs, and never splits a pack', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const writer = repo.writer({
    packSize: 16 * kib,
    uploads: 1,
    blobsPerIndex: 500,
    packsPerIndex: 1000,
    indexIntervalMs: 3_600_000,
  });
  const stored = new Set(await addTinyBlobs(repo, writer, 3000));
  await writer.flush();
  const listed = new Set<string>();
  const indexOf = new Map<string, string>();
  const files: { blobs: number; lastPack: number }[] = [];
  for await (const f of backend.list('index')) {
    const perPack = new Map<string, number>();
    readIndexFile(
      indexText(decodeUnpacked(repo.key, await backend.load({ type: 'index', name: f.name }), repo.config.version)),
      f.name,
      (pack, b) => {
        perPack.set(pack, (perPack.get(pack) ?? 0) + 1);
        listed.add(b.id);
      },
    );
    for (const pack of perPack.keys()) {
      assert.equal(indexOf.get(pack), undefined, `pack ${pack} is listed by two index files`);
      indexOf.set(pack, f.name);
    }
    files.push({ blobs: [...perPack.values()].reduce((a, b) => a + b, 0), lastPack: [...perPack.values()].at(-1)! });
  }
  assert.deepEqual(listed, stored);
  const shape = JSON.stringify(files);
  assert.ok(files.length >= 5, shape);
  // each file was written by the pack that took it to the cap (one, the last, may hold fewer)
  assert.ok(files.filter((f) => f.blobs < 500).length <= 1, shape);
  for (const f of files) assert.ok(f.blobs - f.lastPack < 500, shape);
});

test('a pack closes at blobsPerPack blobs, however small they are', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const writer = repo.writer({ blobsPerPack: 100, uploads: 1 });
  await addTinyBlobs(repo, writer, 1000);
  await writer.flush();
  const perPack = await Promise.all(repo.index.packs().map(async (pack) => (await repo.readPackHeader(pack)).length));
  assert.deepEqual(
    perPack,
    Array.from({ length: 10 }, () => 100),
  );
});

test('tree packs close at treePackSize, data packs at packSize', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const writer = repo.writer({ packSize: 256 * kib, treePackSize: 64 * kib, uploads: 1 });
  for (let i = 0; i < 40; i++) {
    for (const type of ['data', 'tree'] as const) {
      const data = randomBytes(10 * kib, i * 2 + (type === 'tree' ? 1 : 0));
      const id = hashID(data);
      if (writer.claim(type, id)) await writer.add(prepareBlob(repo.key, type, id, data, true), data.length);
    }
  }
  await writer.flush();
  const sizes = { data: [] as number[], tree: [] as number[] };
  for await (const f of backend.list('pack')) {
    const [first] = await repo.readPackHeader(f.name);
    sizes[first.type].push(f.size);
  }
  const shape = JSON.stringify(sizes);
  // 40 blobs of 10 KiB: seven to a tree pack, over 25 to a data pack; the last of each is partial
  assert.equal(sizes.tree.filter((n) => n >= 64 * kib && n < 80 * kib).length, 5, shape);
  assert.equal(sizes.tree.length, 6, shape);
  assert.equal(sizes.data.filter((n) => n >= 256 * kib).length, 1, shape);
  assert.equal(sizes.data.length, 2, shape);
  assert.equal(
    writer.stats.packBytes,
    [...sizes.data, ...sizes.tree].reduce((a, b) => a + b, 0),
    'stats count the bytes stored',
  );
});

test('every pack is named by the SHA-256 of its bytes, hashed as blobs arrive', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  // data packs of 4 MiB fed blobs from 100 bytes to 1.7 MiB (hashing steps of 1 MiB fall inside and between them);
  // tree packs start in a 1 MiB buffer and grow into a bigger one on the way to 3 MiB
  const writer = repo.writer({ packSize: 4 * mib, treePackSize: 3 * mib, uploads: 2 });
  const sizes = [100, 1.7 * mib, 5 * kib, 600 * kib, 1 * mib, 40, 900 * kib, 2 * mib, 300 * kib, 12 * kib];
  for (let round = 0; round < 3; round++) {
    for (const [i, size] of sizes.entries()) {
      for (const type of ['data', 'tree'] as const) {
        const data = randomBytes(size, 1000 * round + 2 * i + (type === 'tree' ? 1 : 0));
        const id = hashID(data);
        if (writer.claim(type, id)) await writer.add(prepareBlob(repo.key, type, id, data, false), data.length);
      }
    }
  }
  await writer.flush();
  let packs = 0;
  for await (const f of backend.list('pack')) {
    assert.equal(hashID(await backend.load({ type: 'pack', name: f.name })), f.name);
    packs++;
  }
  assert.ok(packs >= 6, `${packs} packs`);
});

/** The buffers packs are saved from, in order; each pack's save takes `delayMs` and checks its bytes at the end. */
function packBuffers(backend: MemBackend, delayMs: number): ArrayBufferLike[] {
  const buffers: ArrayBufferLike[] = [];
  const save = backend.save.bind(backend);
  backend.save = async (h, data, signal) => {
    if (h.type !== 'pack') return save(h, data, signal);
    buffers.push(data.buffer);
    await new Promise((r) => setTimeout(r, delayMs));
    assert.equal(hashID(data), h.name, "a pack's bytes changed during its upload");
    return save(h, data, signal);
  };
  return buffers;
}

test("a stored data pack's buffer carries the next pack, never while its own upload still reads it", async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  // uploads that take a while and check, at their end, that the bytes they were given still hash to the pack's name
  const buffers = packBuffers(backend, 5);
  // packs of four blobs; one upload at a time, so a pack opens once the one two before it is stored
  const writer = repo.writer({ packSize: mib, uploads: 1 });
  const ids: string[] = [];
  for (let i = 0; i < 16; i++) {
    const data = randomBytes(300 * kib, 50 + i);
    const id = hashID(data);
    ids.push(id);
    if (writer.claim('data', id)) await writer.add(prepareBlob(repo.key, 'data', id, data, false), data.length);
  }
  await writer.flush();
  assert.equal(buffers.length, 4);
  assert.ok(new Set(buffers).size < buffers.length, 'some pack went out in a buffer an earlier pack used');
  const reopened = await Repository.open(backend, testPassword);
  await reopened.loadIndex();
  for (const [i, id] of ids.entries())
    assert.ok(Buffer.from(await reopened.loadBlob('data', id)).equals(Buffer.from(randomBytes(300 * kib, 50 + i))));
});

test('packs of tiny blobs (10,000 and more) each get a fresh buffer: a backup of tiny files is bound by memory', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const buffers = packBuffers(backend, 0);
  const writer = repo.writer({ blobsPerPack: 10_000, uploads: 1 });
  await addTinyBlobs(repo, writer, 30_000);
  await writer.flush();
  assert.equal(buffers.length, 3);
  assert.equal(new Set(buffers).size, 3);
});
