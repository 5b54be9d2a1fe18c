import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { newMasterKey } from '../../../src/engine/crypto/key.ts';
import {
  CorruptBlobError,
  NoRepositoryError,
  RepositoryExistsError,
  WrongPasswordError,
} from '../../../src/engine/repository/errors.ts';
import { hashID } from '../../../src/engine/ids/id.ts';
import { prepareBlob } from '../../../src/engine/pack/prepare.ts';
import { PackWriter, repoParts } from '../../../src/engine/repository/pack-writer.ts';
import { adoptUnindexedPacks } from '../../../src/engine/repository/adopt.ts';
import { randomBytes, testKDF, testPassword, testPolynomial, testRepo } from '../../support/repo.ts';

async function storeBlobs(
  repo: Repository,
  blobs: Uint8Array[],
  writer: PackWriter = repo.writer({ packSize: 64 * 1024 }),
): Promise<string[]> {
  const ids: string[] = [];
  for (const data of blobs) {
    const id = hashID(data);
    ids.push(id);
    if (writer.claim('data', id)) await writer.add(prepareBlob(repo.key, 'data', id, data, true), data.length);
  }
  await writer.flush();
  return ids;
}

test('init, then open with the password; a wrong password and a missing repository are named', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const again = await Repository.open(backend, testPassword);
  assert.equal(again.config.id, repo.config.id);
  assert.equal(again.config.version, 2);
  assert.equal(again.config.chunkerPolynomial, testPolynomial);
  await assert.rejects(Repository.open(backend, 'nope'), WrongPasswordError);
  await assert.rejects(Repository.open(new MemBackend(), testPassword), NoRepositoryError);
  await assert.rejects(Repository.init(backend, testPassword, { kdf: testKDF }), RepositoryExistsError);
});

test('a first init that loses the race after its check still succeeds, and both racers read one repository', async () => {
  // two first backups of a namespace pass the same key, id and polynomial; the loser looked for a config before the
  // winner saved one, so it goes on to prepare the location, add its key and save the same config again
  const identity = {
    masterKey: newMasterKey(),
    id: hashID(randomBytes(8, 3)),
    polynomial: testPolynomial,
    kdf: testKDF,
  };
  const backend = new MemBackend();
  let winner: Repository | undefined;
  const late = Object.create(backend) as MemBackend;
  for (const m of ['save', 'load', 'stat', 'remove', 'list'] as const)
    Object.assign(late, { [m]: backend[m].bind(backend) });
  late.create = async () => {
    winner = await Repository.init(backend, testPassword, identity);
    return backend.create();
  };
  const loser = await Repository.init(late, testPassword, identity);
  assert.ok(winner);
  const [stored] = await storeBlobs(winner, [randomBytes(5000, 4)]);
  const reopened = await Repository.open(backend, testPassword);
  assert.equal(reopened.config.id, identity.id);
  assert.equal(loser.config.id, identity.id);
  await reopened.loadIndex();
  assert.ok(Buffer.from(await reopened.loadBlob('data', stored)).equals(Buffer.from(randomBytes(5000, 4))));
});

test('an added key opens the same repository', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  await repo.addKey('second password', testKDF);
  const other = await Repository.open(backend, 'second password');
  for (const part of ['encrypt', 'macK', 'macR'] as const)
    assert.ok(Buffer.from(other.key[part]).equals(Buffer.from(repo.key[part])));
});

test('blobs stored through the writer load back after reopening, compressed or not', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const blobs = [randomBytes(100_000, 1), Buffer.alloc(200_000, 'a'), randomBytes(10, 3), new Uint8Array(0)];
  const ids = await storeBlobs(repo, blobs);
  const reopened = await Repository.open(backend, testPassword);
  await reopened.loadIndex();
  for (let i = 0; i < blobs.length; i++)
    assert.ok(Buffer.from(await reopened.loadBlob('data', ids[i])).equals(Buffer.from(blobs[i])), `blob ${i}`);
  const text = reopened.index.get(ids[1], 'data')!;
  assert.ok(text.uncompressedLength === 200_000 && text.length < 2000, 'compressible data is stored compressed');
  const random = reopened.index.get(ids[0], 'data')!;
  assert.equal(random.uncompressedLength, 0, 'incompressible data is stored raw');
});

test('each pack header agrees with the index', async () => {
  const repo = await testRepo();
  await storeBlobs(
    repo,
    Array.from({ length: 12 }, (_, i) => randomBytes(30_000, i + 10)),
  );
  assert.ok(repo.index.packs().length >= 4);
  for (const pack of repo.index.packs()) {
    for (const b of await repo.readPackHeader(pack)) assert.deepEqual(repo.index.get(b.id, b.type), { ...b, pack });
  }
});

test('index files are written while packs complete, not only at the end', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const writer = repo.writer({ packSize: 16 * 1024, packsPerIndex: 1, uploads: 1 });
  for (let i = 0; i < 6; i++) {
    const data = randomBytes(20_000, 100 + i);
    const id = hashID(data);
    writer.claim('data', id);
    await writer.add(prepareBlob(repo.key, 'data', id, data, true), data.length);
  }
  let before = 0;
  for await (const _ of backend.list('index')) before++;
  assert.ok(before >= 3, `expected index files before flush, found ${before}`);
  await writer.flush();
});

test('packs left without an index by a crash are adopted from their headers', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const crashed = new PackWriter(repoParts(repo), { packSize: 16 * 1024, writeIndexFiles: false });
  const ids = await storeBlobs(repo, [randomBytes(40_000, 7), randomBytes(40_000, 8)], crashed);
  const next = await Repository.open(backend, testPassword);
  await next.loadIndex();
  assert.equal(next.index.size, 0);
  const adopted = await adoptUnindexedPacks(next);
  assert.equal(adopted.blobs, 2);
  assert.ok(next.writer().has('data', ids[0]));
  const third = await Repository.open(backend, testPassword);
  await third.loadIndex();
  assert.ok(Buffer.from(await third.loadBlob('data', ids[1])).equals(Buffer.from(randomBytes(40_000, 8))));
});

test('a flipped byte in a pack is reported naming the pack and the blob', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const [id] = await storeBlobs(repo, [randomBytes(5000, 42)]);
  const loc = repo.index.get(id, 'data')!;
  const bytes = await backend.load({ type: 'pack', name: loc.pack });
  bytes[loc.offset + 100] ^= 1;
  await backend.save({ type: 'pack', name: loc.pack }, bytes);
  await assert.rejects(repo.loadBlob('data', id), (err: Error) => {
    assert.ok(err instanceof CorruptBlobError);
    assert.match(err.message, new RegExp(`corrupted pack ${loc.pack} holding blob ${id}`));
    return true;
  });
});

test('open reads the config while it looks for the key, not after', async () => {
  const backend = new MemBackend();
  await testRepo(backend);
  // a config read that answers only once the key files are being listed: opening one after the other never ends
  let keysListed!: () => void;
  const listing = new Promise<void>((resolve) => (keysListed = resolve));
  const gated = Object.create(backend) as MemBackend;
  gated.load = async (h, offset, length, signal) => {
    if (h.type === 'config') await listing;
    return backend.load(h, offset, length, signal);
  };
  gated.list = (type, signal) => {
    if (type === 'key') keysListed();
    return backend.list(type, signal);
  };
  const timeout = new Promise((_, reject) =>
    setTimeout(() => reject(new Error('open read the config and the keys one after the other')), 2000).unref(),
  );
  const repo = (await Promise.race([Repository.open(gated, testPassword), timeout])) as Repository;
  assert.equal(repo.config.version, 2);
  // a missing repository is still named as such, not as a wrong password (it has no key files either)
  await assert.rejects(Repository.open(new MemBackend(), 'nope'), NoRepositoryError);
});

test('index files in any JSON spelling load, the fast reader giving way to the general one midway', async () => {
  const backend = new MemBackend();
  const repo = await testRepo(backend);
  const ids = await storeBlobs(repo, [randomBytes(3000, 51), randomBytes(3000, 52), randomBytes(3000, 53)]);
  const written = new Map(ids.map((id) => [id, repo.index.get(id, 'data')!]));
  for await (const f of backend.list('index')) await backend.remove({ type: 'index', name: f.name });
  // the same blobs, the last one with its fields in another order: read fast up to there, then read again in full
  const entry = (id: string) => {
    const l = written.get(id)!;
    return {
      id,
      type: 'data',
      offset: l.offset,
      length: l.length,
      ...(l.uncompressedLength ? { uncompressed_length: l.uncompressedLength } : {}),
    };
  };
  const pack = written.get(ids[0])!.pack;
  assert.ok(
    ids.every((id) => written.get(id)!.pack === pack),
    'the test expects the three blobs in one pack',
  );
  const last = entry(ids[2]);
  const reordered = {
    ...('uncompressed_length' in last ? { uncompressed_length: last.uncompressed_length } : {}),
    length: last.length,
    offset: last.offset,
    type: last.type,
    id: last.id,
  };
  const text = `{"packs":[{"id":"${pack}","blobs":[${JSON.stringify(entry(ids[0]))},${JSON.stringify(entry(ids[1]))},${JSON.stringify(reordered)}]}]}`;
  await repo.saveUnpacked('index', Buffer.from(text));
  await repo.saveUnpacked(
    'index',
    Buffer.from(JSON.stringify({ packs: [{ id: pack, blobs: [entry(ids[1])] }] }, null, 2)),
  );
  const reopened = await Repository.open(backend, testPassword);
  await reopened.loadIndex();
  assert.equal(reopened.index.size, 3);
  for (const id of ids) assert.deepEqual(reopened.index.get(id, 'data'), written.get(id));
});

test('a blob stored by two writers that did not see each other is read from its other copy when the first is damaged', async () => {
  const backend = new MemBackend();
  const first = await testRepo(backend);
  // opened before the first stores anything: like a concurrent backup, it stores the same blob again
  const second = await Repository.open(backend, testPassword);
  const plain = randomBytes(5000, 43);
  const [id] = await storeBlobs(first, [plain]);
  await storeBlobs(second, [plain]);

  const repo = await Repository.open(backend, testPassword);
  await repo.loadIndex();
  const packs: string[] = [];
  for await (const f of backend.list('pack')) packs.push(f.name);
  assert.equal(packs.length, 2, 'two packs hold the blob');
  const loc = repo.index.get(id, 'data')!;
  const bytes = await backend.load({ type: 'pack', name: loc.pack });
  bytes[loc.offset + 100] ^= 1;
  await backend.save({ type: 'pack', name: loc.pack }, bytes);
  assert.ok(Buffer.from(await repo.loadBlob('data', id)).equals(Buffer.from(plain)), 'read from the undamaged copy');
});
