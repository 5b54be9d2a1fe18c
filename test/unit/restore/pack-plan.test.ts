// Issue 34: a restore organised by pack. A file whose blobs lie in several packs is read a pack at a time, each pack
// once, and written at its offsets; and an index that lies about where a blob is (past its pack's end, or longer
// than it is) fails the restore naming the pack, with nothing written outside the target and no file left holding
// what the lie pointed at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import type { Handle } from '../../../src/engine/backend/backend.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { indexText } from '../../../src/engine/index/index-file.ts';
import { randomBytes, testPassword, testRepo } from '../../support/repo.ts';
import { hashID } from '../../../src/engine/ids/id.ts';
import { prepareBlob } from '../../../src/engine/pack/prepare.ts';
import { PackReader } from '../../../src/engine/restore/pack-reader.ts';
import { openHere } from '../../../src/engine/restore/open-blobs.ts';
import { BlobPastPackEndError } from '../../../src/engine/repository/errors.ts';

/** Counts the reads of each pack. */
class PackCountingBackend extends MemBackend {
  readonly reads = new Map<string, number>();

  override async load(h: Handle, offset = 0, length = 0, signal?: AbortSignal): Promise<Uint8Array> {
    if (h.type === 'pack') this.reads.set(h.name, (this.reads.get(h.name) ?? 0) + 1);
    return super.load(h, offset, length, signal);
  }
}

const work = await mkdtemp(join(tmpdir(), 'ferry-pack-plan-'));
test.after(() => rm(work, { recursive: true, force: true }));

test('a file whose blobs lie in several packs restores byte-identical, each of its packs read once', async () => {
  const source = join(work, 'several-src');
  await mkdir(source);
  const data = Buffer.from(randomBytes(48 << 20, 34));
  await writeFile(join(source, 'disk.img'), data);
  const backend = new PackCountingBackend();
  const repo = await testRepo(backend);
  const { snapshot } = await backup(repo, { paths: [source] });
  const dataPacks = new Set(
    repo.index
      .packs()
      .filter((p) => repo.index.span(p, 'data') !== undefined)
      .map(String),
  );
  assert.ok(dataPacks.size >= 3, `the file should lie in several packs, got ${dataPacks.size}`);
  backend.reads.clear();
  const target = join(work, 'several-restored');
  await restoreTree(repo, snapshot.tree, { target, subpath: source });
  assert.ok((await readFile(join(target, 'disk.img'))).equals(data), 'the restored file differs');
  for (const pack of dataPacks)
    assert.equal(backend.reads.get(pack), 1, `data pack ${pack} read ${backend.reads.get(pack) ?? 0} times`);
});

/** A repository of two files (one large, one small) whose index is rewritten by `lie` before it is read again. */
async function lyingRepo(
  name: string,
  lie: (blob: { offset: number; length: number }, packSize: number) => void,
): Promise<{ repo: Repository; snapshotTree: string; source: string }> {
  const source = join(work, `${name}-src`);
  await mkdir(source);
  await writeFile(join(source, 'big.bin'), randomBytes(3 << 20, 7));
  await writeFile(join(source, 'small.txt'), 'a small file\n');
  const backend = new MemBackend();
  const first = await testRepo(backend);
  const { snapshot } = await backup(first, { paths: [source] });
  for await (const id of first.list('index')) {
    const index = JSON.parse(indexText(await first.loadUnpacked('index', id))) as {
      packs: { id: string; blobs: { type: string; offset: number; length: number }[] }[];
    };
    for (const pack of index.packs) {
      const packSize = (await backend.stat({ type: 'pack', name: pack.id })).size;
      // the last data blob of the pack holding the large file's data: the one a lie can push past the end
      const blob = pack.blobs.filter((b) => b.type === 'data' && b.length > 1 << 20).at(-1);
      if (blob) lie(blob, packSize);
    }
    await first.saveUnpacked('index', Buffer.from(JSON.stringify(index)));
    await backend.remove({ type: 'index', name: id });
  }
  const repo = await Repository.open(backend, testPassword);
  await repo.loadIndex();
  return { repo, snapshotTree: snapshot.tree, source };
}

/** Restores into a fresh folder in a parent of its own: the restore must fail naming the pack, and leave the parent holding only the target. */
async function assertRefused(name: string, repo: Repository, tree: string, source: string, why: RegExp): Promise<void> {
  const parent = join(work, `${name}-parent`);
  await mkdir(parent);
  const target = join(parent, 'target');
  await assert.rejects(restoreTree(repo, tree, { target, subpath: source }), (err: Error) => {
    assert.match(err.message, why);
    return true;
  });
  assert.deepEqual(await readdir(parent), ['target'], 'the restore wrote outside its target');
  const left = await readdir(target);
  assert.ok(!left.includes('big.bin'), `the file the lie was about is left behind: ${left.join(', ')}`);
}

test('a blob the index places past the end of its pack fails the restore naming it and the pack; nothing is left', async () => {
  const { repo, snapshotTree, source } = await lyingRepo('past-end', (blob, packSize) => {
    blob.offset = packSize + 4096;
  });
  await assertRefused(
    'past-end',
    repo,
    snapshotTree,
    source,
    /the index places blob [0-9a-f]{64} at \d+-\d+ in pack [0-9a-f]{64}, which is only \d+ bytes/,
  );
});

test('a blob the index says is longer than it is fails its check naming the pack and blob; nothing is left', async () => {
  const { repo, snapshotTree, source } = await lyingRepo('length-lie', (blob) => {
    blob.length += 1000;
  });
  await assertRefused(
    'length-lie',
    repo,
    snapshotTree,
    source,
    /corrupted pack [0-9a-f]{64} holding blob [0-9a-f]{64}/,
  );
});

test('in a read that ran past the end of its pack, only the blob placed there fails; the others come from a read that stops at the end', async () => {
  const repo = await testRepo();
  const writer = repo.writer();
  const blobs = [1, 2, 3].map((seed) => Buffer.from(randomBytes(100_000, seed)));
  for (const data of blobs) {
    const id = hashID(data);
    if (writer.claim('data', id)) await writer.add(prepareBlob(repo.key, 'data', id, data, false), data.length);
  }
  await writer.flush();
  const locs = blobs.map((data) => repo.index.get(hashID(data), 'data')!);
  const pack = locs[0].pack;
  const packSize = (await repo.backend.stat({ type: 'pack', name: pack })).size;
  const lie = { ...locs[2], offset: packSize + 10 };
  // the data span as the lying index has it, so the first read reaches past the end
  const reader = new PackReader(repo.backend, openHere(repo), {
    span: () => ({ start: 0, end: lie.offset + lie.length }),
    cache: 1 << 20,
  });
  const [a, b, c] = await Promise.allSettled([reader.read(locs[0]), reader.read(locs[1]), reader.read(lie)]);
  assert.ok(a.status === 'fulfilled' && Buffer.from(a.value).equals(blobs[0]), 'the first blob did not come');
  assert.ok(b.status === 'fulfilled' && Buffer.from(b.value).equals(blobs[1]), 'the second blob did not come');
  assert.ok(
    c.status === 'rejected' && c.reason instanceof BlobPastPackEndError,
    `the lie was not refused: ${c.status}`,
  );
  assert.match(
    c.reason.message,
    new RegExp(`blob ${lie.id} at ${lie.offset}-\\d+ in pack ${pack}, which is only ${packSize} bytes`),
  );
});
