import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashID } from '../../../src/engine/ids/id.ts';
import { prepareBlob } from '../../../src/engine/pack/prepare.ts';
import { PackReader } from '../../../src/engine/restore/pack-reader.ts';
import { openHere, openSharing } from '../../../src/engine/restore/open-blobs.ts';
import { SmallFileWriter } from '../../../src/engine/restore/small-file-writer.ts';
import { closeSync, constants, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ByteBudget } from '../../../src/engine/restore/byte-budget.ts';
import type { Repository } from '../../../src/engine/repository/repository.ts';
import { CorruptBlobError } from '../../../src/engine/repository/errors.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';
import { CountingBackend, KeepingBackend } from './counting-backend.ts';
import { release } from '../../../src/engine/memory/release.ts';

/** A repository holding `count` blobs of `size` bytes in packs of about `packSize` bytes. */
async function repoWithBlobs(
  count: number,
  size: number,
  packSize: number,
  backend = new CountingBackend(),
): Promise<{ repo: Repository; backend: CountingBackend; blobs: Map<string, Uint8Array> }> {
  const repo = await testRepo(backend);
  const writer = repo.writer({ packSize });
  const blobs = new Map<string, Uint8Array>();
  for (let i = 0; i < count; i++) {
    const data = randomBytes(size, i + 1);
    const id = hashID(data);
    blobs.set(id, data);
    if (writer.claim('data', id)) await writer.add(prepareBlob(repo.key, 'data', id, data, false), data.length);
  }
  await writer.flush();
  backend.packReads = 0;
  return { repo, backend, blobs };
}

function locate(repo: Repository, id: string) {
  return repo.index.get(id, 'data')!;
}

test('blobs asked for together are read with one ranged read per pack, each resolving to its own plaintext', async () => {
  const { repo, backend, blobs } = await repoWithBlobs(300, 1000, 64 * 1024);
  const packs = repo.index.packs().length;
  assert.ok(packs >= 4, `only ${packs} packs`);
  const reader = new PackReader(repo.backend, openHere(repo));
  const got = await Promise.all([...blobs.keys()].map((id) => reader.read(locate(repo, id))));
  [...blobs.values()].forEach((data, i) => assert.ok(Buffer.from(got[i]).equals(Buffer.from(data)), `blob ${i}`));
  assert.equal(backend.packReads, packs);
  assert.equal(reader.readsIssued, packs);
});

test('a read never exceeds maxRead, and a wide gap between wanted blobs starts a new read', async () => {
  const { repo, backend, blobs } = await repoWithBlobs(64, 4000, 1 << 20);
  assert.equal(repo.index.packs().length, 1);
  const ids = [...blobs.keys()];
  const reader = new PackReader(repo.backend, openHere(repo), { maxRead: 40_000, maxGap: 0 });
  await Promise.all(ids.map((id) => reader.read(locate(repo, id))));
  // 64 sealed blobs of 4032 bytes: 9 fit in 40,000 bytes, so 8 reads
  assert.equal(backend.packReads, Math.ceil(64 / Math.floor(40_000 / 4032)));
  backend.packReads = 0;
  // every other blob, with gaps of one blob that maxGap 0 refuses to read through
  const sparse = new PackReader(repo.backend, openHere(repo), { maxGap: 0 });
  await Promise.all(
    ids
      .map((id) => locate(repo, id))
      .sort((a, b) => a.offset - b.offset)
      .filter((_, i) => i % 2 === 0)
      .map((loc) => sparse.read(loc)),
  );
  assert.equal(backend.packReads, 32);
  backend.packReads = 0;
  const bridged = new PackReader(repo.backend, openHere(repo), { maxGap: 5000 });
  await Promise.all(
    ids
      .map((id) => locate(repo, id))
      .sort((a, b) => a.offset - b.offset)
      .filter((_, i) => i % 2 === 0)
      .map((loc) => bridged.read(loc)),
  );
  assert.equal(backend.packReads, 1);
});

test('the same blob asked for twice costs one read and reaches both callers, each owning its plaintext', async () => {
  // blobs large enough to have memory of their own (a small one is a view of a shared buffer, which is never freed)
  const { repo, backend, blobs } = await repoWithBlobs(3, 100_000, 1 << 20);
  const [id] = blobs.keys();
  const reader = new PackReader(repo.backend, openHere(repo));
  const [a, b] = await Promise.all([reader.read(locate(repo, id)), reader.read(locate(repo, id))]);
  assert.ok(Buffer.from(a).equals(Buffer.from(blobs.get(id)!)) && Buffer.from(b).equals(Buffer.from(a)));
  assert.equal(backend.packReads, 1);
  // a caller frees its plaintext once written (release, then done); the other's must survive that
  release(a);
  reader.done(locate(repo, id), a);
  assert.equal(a.length, 0);
  assert.ok(Buffer.from(b).equals(Buffer.from(blobs.get(id)!)));
});

test('a read whose blobs were all opened is freed once they are handed over; one a sealed blob came from is not', async () => {
  const backend = new KeepingBackend();
  const { repo, blobs } = await repoWithBlobs(20, 1000, 64 * 1024, backend);
  const ids = [...blobs.keys()];
  const opened = new PackReader(repo.backend, openHere(repo));
  const got = await Promise.all(ids.map((id) => opened.read(locate(repo, id))));
  ids.forEach((id, i) => assert.ok(Buffer.from(got[i]).equals(Buffer.from(blobs.get(id)!)), `blob ${i}`));
  assert.ok(backend.reads.length > 0);
  assert.ok(
    backend.reads.every((r) => r.length === 0),
    'every read freed',
  );

  backend.reads = [];
  const mixed = new PackReader(repo.backend, openHere(repo));
  const loc = locate(repo, ids[0]);
  const [sealed] = await Promise.all([
    mixed.readSealed(loc),
    ...ids.slice(1).map((id) => mixed.read(locate(repo, id))),
  ]);
  const held = backend.reads.find((r) => r.buffer === sealed.buffer);
  assert.ok(held && held.length > 0, 'the read a sealed blob is a view of is kept');
  assert.ok(
    Buffer.from(sealed).equals(
      Buffer.from(await repo.backend.load({ type: 'pack', name: loc.pack }, loc.offset, loc.length)),
    ),
  );
});

test('a blob asked for sealed comes as the pack stores it, sharing the read of those opened, and is not opened', async () => {
  const { repo, backend, blobs } = await repoWithBlobs(20, 1000, 64 * 1024);
  const ids = [...blobs.keys()];
  let opened = 0;
  const open = openHere(repo);
  const reader = new PackReader(repo.backend, (pack, list, bytes, start, inPlace) => {
    opened += list.length;
    return open(pack, list, bytes, start, inPlace);
  });
  // even blobs sealed, odd ones opened; the first also opened, by a second caller
  const got = await Promise.all([
    ...ids.map((id, i) => (i % 2 === 0 ? reader.readSealed(locate(repo, id)) : reader.read(locate(repo, id)))),
    reader.read(locate(repo, ids[0])),
  ]);
  assert.equal(backend.packReads, repo.index.packs().length);
  assert.equal(opened, 11);
  for (const [i, id] of ids.entries()) {
    const loc = locate(repo, id);
    const expected =
      i % 2 === 0 ? await repo.backend.load({ type: 'pack', name: loc.pack }, loc.offset, loc.length) : blobs.get(id)!;
    assert.ok(Buffer.from(got[i]).equals(Buffer.from(expected)), `blob ${i}`);
  }
  assert.ok(Buffer.from(got[20]).equals(Buffer.from(blobs.get(ids[0])!)));
});

test('a damaged blob fails alone, naming its pack and id; a missing pack fails all its blobs', async () => {
  const { repo, backend, blobs } = await repoWithBlobs(10, 1000, 1 << 20);
  const ids = [...blobs.keys()];
  const victim = locate(repo, ids[4]);
  const path = `data/${victim.pack.slice(0, 2)}/${victim.pack}`;
  const pack = await backend.load({ type: 'pack', name: victim.pack });
  pack[victim.offset + 20] ^= 1;
  await backend.save({ type: 'pack', name: victim.pack }, pack);
  const reader = new PackReader(repo.backend, openHere(repo));
  const results = await Promise.allSettled(ids.map((id) => reader.read(locate(repo, id))));
  results.forEach((r, i) => {
    if (i !== 4) return assert.equal(r.status, 'fulfilled', `blob ${i}`);
    assert.equal(r.status, 'rejected');
    const err = (r as PromiseRejectedResult).reason as Error;
    assert.ok(
      err instanceof CorruptBlobError && err.message.includes(victim.pack) && err.message.includes(ids[4]),
      err.message,
    );
  });
  await backend.remove({ type: 'pack', name: victim.pack });
  const gone = await Promise.allSettled(ids.map((id) => reader.read(locate(repo, id))));
  assert.ok(
    gone.every((r) => r.status === 'rejected' && backend.isNotExist(r.reason)),
    `${path} is gone, yet a read succeeded`,
  );
});

test('with a budget, blobs are handed over only as earlier ones are done with, and each pack is still read once', async () => {
  const { repo, backend, blobs } = await repoWithBlobs(300, 1000, 16 * 1024);
  const packs = repo.index.packs().length;
  assert.ok(packs >= 10, `only ${packs} packs`);
  const ids = [...blobs.keys()];
  const victim = locate(repo, ids[150]);
  const pack = await backend.load({ type: 'pack', name: victim.pack });
  pack[victim.offset + 20] ^= 1;
  await backend.save({ type: 'pack', name: victim.pack }, pack);
  backend.packReads = 0;
  const capacity = 40_000;
  // as a restore reads: whole packs, the part not yet wanted kept for later
  const reader = new PackReader(repo.backend, openHere(repo), {
    budget: new ByteBudget(capacity),
    maxRead: 20_000,
    cache: 40_000,
    span: (p) => repo.index.span(p, 'data'),
  });
  let held = 0;
  let maxHeld = 0;
  // every blob is asked for at once, as a restore's files do; each is "written" a turn later, then given back
  const results = await Promise.allSettled(
    ids.map(async (id) => {
      const loc = locate(repo, id);
      const data = await reader.read(loc);
      maxHeld = Math.max(maxHeld, (held += data.length));
      await new Promise((r) => setImmediate(r));
      held -= data.length;
      reader.done(loc);
      return data;
    }),
  );
  results.forEach((r, i) => {
    if (i === 150) return assert.equal(r.status, 'rejected', 'the damaged blob was handed over');
    assert.ok(r.status === 'fulfilled' && Buffer.from(r.value).equals(Buffer.from(blobs.get(ids[i])!)), `blob ${i}`);
  });
  assert.ok(maxHeld <= capacity, `${maxHeld} bytes handed over at once, past the budget of ${capacity}`);
  assert.ok(maxHeld >= capacity / 2, `at most ${maxHeld} bytes handed over at once: the budget was not used`);
  assert.equal(backend.packReads, packs);
});

test('a budget smaller than one read still lets every blob through', async () => {
  const { repo, blobs } = await repoWithBlobs(40, 1000, 16 * 1024);
  const reader = new PackReader(repo.backend, openHere(repo), { budget: new ByteBudget(3000) });
  const got = await Promise.all(
    [...blobs.keys()].map(async (id) => {
      const loc = locate(repo, id);
      const data = await reader.read(loc);
      reader.done(loc);
      return data;
    }),
  );
  assert.deepEqual(
    got.map((d) => hashID(d)),
    [...blobs.keys()],
  );
});

test('aborting rejects blobs still waiting for a read', async () => {
  const { repo, blobs } = await repoWithBlobs(20, 1000, 4096);
  const ctl = new AbortController();
  const reader = new PackReader(repo.backend, openHere(repo), { reads: 1, signal: ctl.signal });
  const pending = [...blobs.keys()].map((id) => reader.read(locate(repo, id)));
  ctl.abort(new Error('stop now'));
  const results = await Promise.allSettled(pending);
  assert.ok(
    results.every((r) => r.status === 'rejected'),
    'a blob was delivered after the abort',
  );
  await assert.rejects(reader.read(locate(repo, [...blobs.keys()][0])), /stop now/);
});

test('with a cache, blobs asked for a few at a time in pack order cost one read per pack, not one per turn', async () => {
  const { repo, backend, blobs } = await repoWithBlobs(200, 1000, 64 * 1024);
  const ids = [...blobs.keys()];
  const packs = repo.index.packs().length;
  const askInTurns = async (reader: PackReader): Promise<void> => {
    for (let i = 0; i < ids.length; i += 5) {
      const got = await Promise.all(ids.slice(i, i + 5).map((id) => reader.read(locate(repo, id))));
      got.forEach((data, j) =>
        assert.ok(Buffer.from(data).equals(Buffer.from(blobs.get(ids[i + j])!)), `blob ${i + j}`),
      );
    }
  };
  await askInTurns(new PackReader(repo.backend, openHere(repo)));
  // without reading ahead, every turn costs a read (two when its blobs straddle packs)
  assert.ok(backend.packReads >= ids.length / 5, `${backend.packReads} reads`);
  backend.packReads = 0;
  await askInTurns(
    new PackReader(repo.backend, openHere(repo), { cache: 1 << 20, span: (pack) => repo.index.span(pack, 'data') }),
  );
  assert.equal(backend.packReads, packs);
});

test('a blob that a read in flight will bring waits for it instead of costing a second read', async () => {
  const { repo, blobs } = await repoWithBlobs(40, 1000, 1 << 20);
  assert.equal(repo.index.packs().length, 1);
  let reads = 0;
  const slow = {
    ...repo.backend,
    load: async (...args: Parameters<typeof repo.backend.load>) => {
      reads++;
      await new Promise((r) => setTimeout(r, 50));
      return repo.backend.load(...args);
    },
  } as typeof repo.backend;
  const reader = new PackReader(slow, openHere(repo), {
    cache: 1 << 20,
    span: (pack) => repo.index.span(pack, 'data'),
  });
  const ids = [...blobs.keys()];
  const first = reader.read(locate(repo, ids[0]));
  // the first read is under way when the others are asked for
  await new Promise((r) => setTimeout(r, 10));
  const rest = await Promise.all(ids.slice(1).map((id) => reader.read(locate(repo, id))));
  await first;
  rest.forEach((data, i) => assert.ok(Buffer.from(data).equals(Buffer.from(blobs.get(ids[i + 1])!))));
  assert.equal(reads, 1);
});

test('a damaged blob in a read kept for later still fails alone when asked for', async () => {
  const { repo, blobs } = await repoWithBlobs(20, 1000, 1 << 20);
  const ids = [...blobs.keys()];
  const victim = locate(repo, ids[10]);
  const damaged = {
    ...repo.backend,
    load: async (...args: Parameters<typeof repo.backend.load>) => {
      const bytes = new Uint8Array(await repo.backend.load(...args));
      const at = victim.offset + 5 - (args[1] ?? 0);
      if (at >= 0 && at < bytes.length) bytes[at] ^= 1;
      return bytes;
    },
  } as typeof repo.backend;
  const reader = new PackReader(damaged, openHere(repo), {
    cache: 1 << 20,
    span: (pack) => repo.index.span(pack, 'data'),
  });
  await reader.read(locate(repo, ids[0]));
  const later = await Promise.allSettled(ids.slice(1).map((id) => reader.read(locate(repo, id))));
  const failed = later.flatMap((r, i) => (r.status === 'rejected' ? [i + 1] : []));
  assert.deepEqual(failed, [10]);
  assert.ok((later[9] as PromiseRejectedResult).reason instanceof CorruptBlobError);
});

test('blobs served from a kept read reach the opener in pack order, whatever order they were asked for in', async () => {
  const { repo, blobs } = await repoWithBlobs(30, 1000, 1 << 20);
  const ids = [...blobs.keys()];
  const here = openHere(repo);
  const orders: number[][] = [];
  const open: typeof here = (pack, bs, bytes, start, inPlace) => {
    orders.push(bs.map((b) => b.offset));
    return here(pack, bs, bytes, start, inPlace);
  };
  const reader = new PackReader(repo.backend, open, { cache: 1 << 20, span: (pack) => repo.index.span(pack, 'data') });
  await reader.read(locate(repo, ids[0]));
  const rest = await Promise.all(
    ids
      .slice(1)
      .reverse()
      .map((id) => reader.read(locate(repo, id))),
  );
  rest.reverse().forEach((data, i) => assert.ok(Buffer.from(data).equals(Buffer.from(blobs.get(ids[i + 1])!))));
  assert.equal(orders.length, 2, 'the first read, then one delivery from the kept bytes');
  for (const o of orders)
    assert.deepEqual(
      o,
      [...o].sort((a, b) => a - b),
    );
});

test('a read reaches ahead to the pack end, but not into bytes already kept', async () => {
  const { repo, blobs } = await repoWithBlobs(40, 1000, 1 << 20);
  const ids = [...blobs.keys()];
  const loads: [number, number][] = [];
  const logged = {
    ...repo.backend,
    load: (...args: Parameters<typeof repo.backend.load>) => {
      loads.push([args[1] ?? 0, (args[1] ?? 0) + (args[2] ?? 0)]);
      return repo.backend.load(...args);
    },
  } as typeof repo.backend;
  const span = (pack: string) => repo.index.span(pack, 'data');
  const reader = new PackReader(logged, openHere(repo), { cache: 1 << 20, span });
  const middle = locate(repo, ids[20]);
  await reader.read(middle);
  assert.deepEqual(loads, [[middle.offset, span(middle.pack)!.end]]);
  const first = await Promise.all(ids.slice(0, 20).map((id) => reader.read(locate(repo, id))));
  first.forEach((data, i) => assert.ok(Buffer.from(data).equals(Buffer.from(blobs.get(ids[i])!))));
  // up to the bytes kept from the first read (its own blob was delivered, so only what follows it is kept)
  assert.deepEqual(loads[1], [locate(repo, ids[0]).offset, middle.offset + middle.length]);
});

test('a small part kept from a read is copied out: it does not hold the whole read, even when the backend gives Buffers', async () => {
  const { repo, blobs } = await repoWithBlobs(40, 1000, 1 << 20);
  const ids = [...blobs.keys()].map((id) => locate(repo, id)).sort((a, b) => a.offset - b.offset);
  // as the filesystem backend does: a Buffer, whose slice() is a view rather than a copy
  const buffers = {
    ...repo.backend,
    load: async (...args: Parameters<typeof repo.backend.load>) => Buffer.from(await repo.backend.load(...args)),
  };
  const span = (pack: string) => repo.index.span(pack, 'data');
  const reader = new PackReader(buffers as typeof repo.backend, openHere(repo), { cache: 1 << 20, span });
  await Promise.all(ids.slice(0, 36).map((loc) => reader.read(loc)));
  const tail = span(ids[0].pack)!.end - (ids[35].offset + ids[35].length);
  assert.ok(tail > 0 && tail < 5000, `the kept part should be the last 4 blobs, is ${tail} bytes`);
  assert.equal(reader.heldBytes, tail, 'the kept part holds more than itself');
  const rest = await Promise.all(ids.slice(36).map((loc) => reader.read(loc)));
  rest.forEach((data, i) =>
    assert.ok(Buffer.from(data).equals(Buffer.from(blobs.get(ids[36 + i].id)!)), `blob ${36 + i}`),
  );
});

test('a read opened on the small-file thread moves there and back: its plaintexts stay whole until the last is done with, then its memory goes', async () => {
  const backend = new KeepingBackend();
  const { repo, blobs } = await repoWithBlobs(16, 1 << 20, 4 << 20, backend);
  const ids = [...blobs.keys()];
  const folder = await mkdtemp(join(tmpdir(), 'ferry-moved-'));
  const root = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY);
  const thread = new SmallFileWriter(repo.key);
  try {
    thread.start(root);
    const reader = new PackReader(repo.backend, openSharing(openHere(repo), thread));
    const locs = ids.map((id) => locate(repo, id));
    // pack by pack, so that each read finds the thread idle
    const got: Uint8Array[] = [];
    for (const pack of new Set(locs.map((l) => l.pack)))
      got.push(...(await Promise.all(locs.filter((l) => l.pack === pack).map((loc) => reader.read(loc)))));
    const order = [...new Set(locs.map((l) => l.pack))].flatMap((pack) => locs.filter((l) => l.pack === pack));
    locs.splice(0, locs.length, ...order);
    ids.splice(0, ids.length, ...order.map((l) => l.id));
    ids.forEach((id, i) => assert.ok(Buffer.from(got[i]).equals(Buffer.from(blobs.get(id)!)), `blob ${i}`));
    // a read opened on the thread comes back as a new buffer, none of those the backend handed over; its stored-raw
    // plaintexts are views of it (once the thread's OpenSSL is bound, after its first 8 MiB)
    const read = new Set<ArrayBufferLike>(backend.reads.map((r) => r.buffer));
    const back = got.map((g) => g.buffer).filter((b, i) => !read.has(b) && got[i].byteLength < b.byteLength);
    assert.ok(back.length > 1, 'plaintexts of a read opened on the thread');
    const home = back.at(-1) as ArrayBuffer;
    const sharing = got.flatMap((g, i) => (g.buffer === home ? [i] : []));
    assert.ok(sharing.length > 1, 'plaintexts decrypted in place share the buffer that came back');
    for (const i of sharing.slice(0, -1)) reader.done(locs[i], got[i]);
    assert.ok(!home.detached, 'held while a plaintext of it is not done with');
    assert.ok(Buffer.from(got[sharing.at(-1)!]).equals(Buffer.from(blobs.get(ids[sharing.at(-1)!])!)));
    reader.done(locs[sharing.at(-1)!], got[sharing.at(-1)!]);
    assert.ok(home.detached, 'freed once the last is done with');
  } finally {
    await thread.close();
    closeSync(root);
    await rm(folder, { recursive: true, force: true });
  }
});

test('plaintexts given back the moment they arrive (their file failed meanwhile) still free their read and all its budget', async () => {
  const backend = new KeepingBackend();
  const { repo, blobs } = await repoWithBlobs(16, 1 << 20, 8 << 20, backend);
  const budget = new ByteBudget(64 << 20);
  const reader = new PackReader(repo.backend, openHere(repo), { budget });
  const locs = [...blobs.keys()].map((id) => locate(repo, id));
  const packs = [...new Set(locs.map((l) => l.pack))];
  assert.ok(packs.length >= 2);
  // the first pack binds this thread's OpenSSL (after 8 MiB), so the next is decrypted in place, its plaintexts views
  // of the read
  const first = locs.filter((l) => l.pack === packs[0]);
  (await Promise.all(first.map((l) => reader.read(l)))).forEach((data, i) => reader.done(first[i], data));
  backend.reads = [];
  const second = locs.filter((l) => l.pack === packs[1]);
  // each given back in the turn it arrives, as a file writer does with a blob of a file that has already failed
  await Promise.all(second.map((l) => reader.read(l).then((data) => reader.done(l, data))));
  assert.ok(backend.reads.length > 0);
  assert.ok(
    backend.reads.every((r) => (r.buffer as ArrayBuffer).detached),
    'the reads are freed',
  );
  assert.ok(budget.tryTake(budget.capacity), 'all of the budget came back');
});
