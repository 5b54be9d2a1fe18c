import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hashID } from '../../../src/engine/ids/id.ts';
import { prepareBlob } from '../../../src/engine/pack/prepare.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { TreeCache } from '../../../src/engine/repository/tree-cache.ts';
import { randomBytes, testPassword, testRepo } from '../../support/repo.ts';
import { CountingBackend } from '../restore/counting-backend.ts';

/** Stores `count` tree-typed blobs (the cache does not parse them) in packs of about `packSize` bytes. */
async function storeTrees(repo: Repository, count: number, packSize: number): Promise<Map<string, Uint8Array>> {
  const writer = repo.writer({ packSize });
  const trees = new Map<string, Uint8Array>();
  for (let i = 0; i < count; i++) {
    const data = Buffer.from(
      JSON.stringify({ nodes: [{ name: `f${i}`, pad: Buffer.from(randomBytes(200, i + 1)).toString('hex') }] }) + '\n',
    );
    const id = hashID(data);
    trees.set(id, data);
    if (writer.claim('tree', id)) await writer.add(prepareBlob(repo.key, 'tree', id, data, true), data.length);
  }
  await writer.flush();
  return trees;
}

test('trees load with one read per tree pack, in any order, and match their ids', async () => {
  const backend = new CountingBackend();
  await storeTrees(await testRepo(backend), 200, 16 * 1024);
  const repo = await Repository.open(backend, testPassword);
  await repo.loadIndex();
  const ids = [...repo.index.entries()]
    .filter((b) => b.type === 'tree')
    .map((b) => b.id)
    .reverse();
  assert.equal(ids.length, 200);
  const packs = repo.index.packs().length;
  assert.ok(packs >= 4, `only ${packs} packs`);
  backend.packReads = 0;
  for (const id of ids) assert.equal(hashID(await repo.loadBlob('tree', id)), id);
  assert.equal(backend.packReads, packs);
  // trees asked for at once share the reads in flight
  const again = await Repository.open(backend, testPassword);
  await again.loadIndex();
  backend.packReads = 0;
  await Promise.all(ids.map((id) => again.loadBlob('tree', id)));
  assert.equal(backend.packReads, packs);
});

test('a pack longer than one read is read in windows; a full cache forgets its oldest ranges', async () => {
  const backend = new CountingBackend();
  const repo = await testRepo(backend);
  const trees = await storeTrees(repo, 100, 1 << 20);
  assert.equal(repo.index.packs().length, 1);
  const locs = [...trees.keys()].map((id) => repo.index.get(id, 'tree')!);
  const span = repo.index.span(locs[0].pack, 'tree')!;
  assert.deepEqual(span, { start: 0, end: locs.reduce((e, l) => Math.max(e, l.offset + l.length), 0) });
  backend.packReads = 0;
  const windowed = new TreeCache(backend, repo.index, { maxRead: 4096 });
  for (const loc of locs) assert.equal((await windowed.sealed(loc)).length, loc.length);
  assert.equal(backend.packReads, Math.ceil(span.end / 4096));
  backend.packReads = 0;
  const tiny = new TreeCache(backend, repo.index, { maxRead: 4096, capacity: 4096 + 512 });
  for (const loc of locs) await tiny.sealed(loc);
  for (const loc of locs) await tiny.sealed(loc);
  assert.equal(
    backend.packReads,
    2 * Math.ceil(span.end / 4096),
    'with room for one window, the second pass reads them all again',
  );
});
