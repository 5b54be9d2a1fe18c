import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backup } from '../../../src/engine/operations/backup.ts';
import { restore } from '../../../src/engine/operations/restore.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { listSnapshots } from '../../../src/engine/repository/snapshots.ts';
import { makeFixtureTree } from '../../support/fixture-tree.ts';
import { compareTrees } from '../../support/compare-tree.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';
import { CountingBackend } from './counting-backend.ts';
import type { Handle } from '../../../src/engine/backend/backend.ts';
import { hashID } from '../../../src/engine/ids/id.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-restorer-'));
test.after(() => rm(work, { recursive: true, force: true }));

test('a restore reads each pack a few times, not once per file or directory, and reproduces the tree', async () => {
  const source = join(work, 'source');
  await makeFixtureTree(source, { smallFiles: 600 });
  const backend = new CountingBackend();
  const repo = await testRepo(backend);
  const { snapshotID } = await backup(repo, { paths: [source] });
  const tree = (await listSnapshots(repo)).find((e) => e.id === snapshotID)!.snapshot.tree;
  const packs = repo.index.packs().length;
  // blobs opened on this thread (the default) and on worker threads
  for (const workers of [0, 2]) {
    backend.packReads = 0;
    const target = join(work, `restored-${workers}`);
    // worker threads are the restore operation's choice; the restorer only takes what opens the blobs
    const progress =
      workers === 0
        ? await restoreTree(repo, tree, { target })
        : await restore(repo, { snapshot: snapshotID, target: { kind: 'directory', path: target }, workers });
    assert.deepEqual(await compareTrees(source, join(target, source)), []);
    assert.ok(progress.filesDone > 600);
    // one read per pack when every request waits at once; the walk's pace splits a few (measured: 7 to 9 for 2
    // packs, 12 on a loaded machine), where one read per blob would be over 600
    assert.ok(
      backend.packReads <= 10 * packs,
      `${backend.packReads} reads for ${packs} packs and ${progress.filesDone} files`,
    );
  }
});

test('small files spread over many folders share pack reads: the walk does not wait for each folder to be made', async () => {
  const source = join(work, 'folders');
  for (let d = 0; d < 60; d++) {
    const dir = join(source, `d${d}`, 'sub');
    await mkdir(dir, { recursive: true });
    for (let f = 0; f < 4; f++) await writeFile(join(dir, `f${f}`), randomBytes(1000 + f, d * 10 + f));
  }
  const backend = new CountingBackend();
  const repo = await testRepo(backend);
  const { snapshotID } = await backup(repo, { paths: [source] });
  const tree = (await listSnapshots(repo)).find((e) => e.id === snapshotID)!.snapshot.tree;
  backend.packReads = 0;
  const target = join(work, 'folders-restored');
  await restoreTree(repo, tree, { target });
  assert.deepEqual(await compareTrees(source, join(target, source)), []);
  // 240 files in 120 folders, all in one or two packs: waiting for each mkdir cost a read per folder (61 measured)
  assert.ok(
    backend.packReads <= 2 * repo.index.packs().length + 2,
    `${backend.packReads} reads for ${repo.index.packs().length} packs`,
  );
});

test('an all-zero file is recreated as a hole without reading its blob', async () => {
  const source = join(work, 'zeros');
  await mkdir(source, { recursive: true });
  await writeFile(join(source, 'zero.img'), Buffer.alloc(3 << 20));
  const read: string[] = [];
  const backend = new (class extends CountingBackend {
    override load(h: Handle, offset?: number, length?: number, signal?: AbortSignal): Promise<Uint8Array> {
      if (h.type === 'pack') read.push(h.name);
      return super.load(h, offset, length, signal);
    }
  })();
  const repo = await testRepo(backend);
  const { snapshotID } = await backup(repo, { paths: [source] });
  const tree = (await listSnapshots(repo)).find((e) => e.id === snapshotID)!.snapshot.tree;
  const dataPacks = repo.index.packs().filter((p) => repo.index.span(p, 'data') !== undefined);
  assert.ok(dataPacks.length > 0);
  read.length = 0;
  const target = join(work, 'zeros-restored');
  const progress = await restoreTree(repo, tree, { target, subpath: source });
  const restored = join(target, 'zero.img');
  assert.ok((await readFile(restored)).equals(Buffer.alloc(3 << 20)));
  assert.equal((await stat(restored)).blocks, 0);
  assert.equal(progress.bytesDone, 3 << 20);
  // the index tells the blob holds zeros: only tree packs are read
  assert.deepEqual(
    read.filter((name) => dataPacks.includes(name)),
    [],
  );
});

/** A backend whose copy of one blob has a flipped byte. */
class DamagingBackend extends CountingBackend {
  victim: { pack: string; offset: number } | undefined;

  override async load(h: Handle, offset = 0, length = 0, signal?: AbortSignal): Promise<Uint8Array> {
    const data = await super.load(h, offset, length, signal);
    const v = this.victim;
    if (!v || h.type !== 'pack' || h.name !== v.pack || v.offset < offset || v.offset >= offset + data.length)
      return data;
    const copy = new Uint8Array(data);
    copy[v.offset - offset] ^= 0x40;
    return copy;
  }
}

test(
  'a damaged blob among many small files fails the restore naming it, settles every file, leaves no damaged file',
  { timeout: 30_000 },
  async () => {
    const source = join(work, 'damaged');
    for (let d = 0; d < 6; d++) {
      await mkdir(join(source, `d${d}`), { recursive: true });
      for (let f = 0; f < 100; f++) await writeFile(join(source, `d${d}`, `f${f}`), randomBytes(200 + f, d * 1000 + f));
    }
    const backend = new DamagingBackend();
    const repo = await testRepo(backend);
    const { snapshotID } = await backup(repo, { paths: [source] });
    const tree = (await listSnapshots(repo)).find((e) => e.id === snapshotID)!.snapshot.tree;
    // a file in the middle of the walk, so its batch holds healthy files too
    const victimData = await readFile(join(source, 'd3', 'f50'));
    const id = hashID(victimData);
    const loc = repo.index.get(id, 'data')!;
    backend.victim = { pack: loc.pack, offset: loc.offset + 20 };
    const target = join(work, 'damaged-restored');
    await assert.rejects(restoreTree(repo, tree, { target }), (err: Error) => err.message.includes(id));
    await assert.rejects(stat(join(target, source, 'd3', 'f50')), { code: 'ENOENT' });
    // every file handed to the writer before the failure is whole
    for (let f = 0; f < 50; f++) {
      const restored = await readFile(join(target, source, 'd0', `f${f}`)).catch(() => undefined);
      if (restored) assert.ok(restored.equals(await readFile(join(source, 'd0', `f${f}`))), `d0/f${f} differs`);
    }
  },
);

test(
  'a canceled restore of many small files settles promptly and rejects with the abort reason',
  { timeout: 30_000 },
  async () => {
    const source = join(work, 'cancel');
    await mkdir(source, { recursive: true });
    for (let f = 0; f < 400; f++) await writeFile(join(source, `f${f}`), randomBytes(300, 5000 + f));
    const repo = await testRepo(new CountingBackend());
    const { snapshotID } = await backup(repo, { paths: [source] });
    const tree = (await listSnapshots(repo)).find((e) => e.id === snapshotID)!.snapshot.tree;
    const controller = new AbortController();
    const target = join(work, 'cancel-restored');
    const restore = restoreTree(repo, tree, {
      target,
      signal: controller.signal,
      onProgress: () => controller.abort(new Error('stop here')),
    });
    await assert.rejects(restore, /stop here/);
    const count = async (): Promise<number> => (await readdir(join(target, source)).catch(() => [])).length;
    const written = await count();
    // the first batch of files may be written whole, not the rest
    assert.ok(written < 400, `${written} files were written despite the cancel`);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(await count(), written, 'files kept appearing after the restore returned');
  },
);
