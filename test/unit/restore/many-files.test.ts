// Issue 34: a restore planned by pack. A blob many files share is read once and reaches every one of them; and
// however many files a restore writes, the plaintext it holds stays within its budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backup } from '../../../src/engine/operations/backup.ts';
import { restoreTree } from '../../../src/engine/restore/restorer.ts';
import { openHere } from '../../../src/engine/restore/open-blobs.ts';
import type { OpenBlobs } from '../../../src/engine/restore/open-blobs.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';
import { CountingBackend } from './counting-backend.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-many-files-'));
test.after(() => rm(work, { recursive: true, force: true }));

test('a blob shared by hundreds of files is read once and every file gets its bytes', { timeout: 60_000 }, async () => {
  const source = join(work, 'shared-src');
  // large enough to be written by this thread, small enough to be one blob; and small files for the small-file thread
  const big = Buffer.from(randomBytes(200 << 10, 1));
  const small = Buffer.from(randomBytes(3000, 2));
  for (let d = 0; d < 4; d++) {
    await mkdir(join(source, `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) {
      await writeFile(join(source, `d${d}`, `big${f}`), big);
      await writeFile(join(source, `d${d}`, `small${f}`), small);
    }
  }
  const backend = new CountingBackend();
  const repo = await testRepo(backend);
  const { snapshot } = await backup(repo, { paths: [source] });
  backend.packReads = 0;
  backend.packBytes = 0;
  const target = join(work, 'shared-restored');
  const progress = await restoreTree(repo, snapshot.tree, { target, subpath: source });
  assert.equal(progress.filesDone, 800);
  for (let d = 0; d < 4; d++)
    for (let f = 0; f < 100; f++) {
      assert.ok((await readFile(join(target, `d${d}`, `big${f}`))).equals(big), `d${d}/big${f} differs`);
      assert.ok((await readFile(join(target, `d${d}`, `small${f}`))).equals(small), `d${d}/small${f} differs`);
    }
  // the trees' pack and the one data pack, each read a few times at most: not once per file
  assert.ok(backend.packReads <= 8, `${backend.packReads} pack reads for two blobs shared by 800 files`);
  assert.ok(backend.packBytes < 4 * (big.length + small.length) + (1 << 20), `${backend.packBytes} bytes read`);
});

test('the plaintext a restore of many files holds stays within its budget', { timeout: 120_000 }, async () => {
  const source = join(work, 'budget-src');
  const fileSize = 96 << 10;
  for (let d = 0; d < 6; d++) {
    await mkdir(join(source, `d${d}`), { recursive: true });
    for (let f = 0; f < 100; f++) await writeFile(join(source, `d${d}`, `f${f}`), randomBytes(fileSize, d * 100 + f));
  }
  const repo = await testRepo();
  const { snapshot } = await backup(repo, { paths: [source] });
  const budget = 1 << 20;
  // every plaintext handed to a writer, and the most of them not yet freed (written) at once
  const handed: Uint8Array[] = [];
  let most = 0;
  const held = (): number => handed.reduce((n, p) => n + p.byteLength, 0);
  const here = openHere(repo);
  const open: OpenBlobs = async (pack, blobs, bytes, start, inPlace) => {
    most = Math.max(most, held());
    const opened = await here(pack, blobs, bytes, start, inPlace);
    for (const p of opened) if (!(p instanceof Error)) handed.push(p);
    most = Math.max(most, held());
    return opened;
  };
  const target = join(work, 'budget-restored');
  const progress = await restoreTree(repo, snapshot.tree, { target, subpath: source, budget, open });
  assert.equal(progress.filesDone, 600);
  assert.equal(handed.length, 600, 'every file was one blob, opened once');
  assert.ok(most <= budget, `${most} bytes of plaintext held at once against a budget of ${budget}`);
  assert.equal(held(), 0, 'plaintext written was not freed');
  for (const f of [0, 57, 99])
    assert.ok(
      (await readFile(join(target, 'd5', `f${f}`))).equals(Buffer.from(randomBytes(fileSize, 500 + f))),
      `d5/f${f} differs`,
    );
});
