// A blob stored in two packs, made by the real restic the way concurrent backups make it: two backups that never
// saw each other's index (copies of one repository, each backed up into, then merged, as two `restic backup` runs
// started together write into one). ferry's check counts every pack whole, its prune leaves an index restic accepts,
// its restore is exact, and check --read-data reads a pack whose blobs all live elsewhere too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { ferry, ferryOK, hasStackTrace, parseJSON } from '../support/ferry-cli.ts';
import { flipByte, packFiles } from '../support/repo-files.ts';
import { randomBytes, testPassword } from '../support/repo.ts';
import { restic, resticJSON } from '../support/restic.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-interop-dup-'));
test.after(() => rm(work, { recursive: true, force: true }));

/** One source folder per backup: `shared.bin` is the same bytes in each, so its blobs are stored by both. */
async function source(name: string, own: number | undefined): Promise<string> {
  const dir = join(work, 'src', name);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'shared.bin'), randomBytes(3 << 19, 1));
  if (own !== undefined) await writeFile(join(dir, `${name}.bin`), randomBytes(1 << 20, own));
  return dir;
}

/**
 * A repository holding the backups of `sources`, each made by restic into its own copy of one empty repository
 * (same keys and chunker), then merged: every blob they share is stored once per backup. Returns each backup's packs.
 */
async function duplicated(name: string, sources: string[]): Promise<{ path: string; packs: string[][] }> {
  const path = join(work, name);
  await restic({ repo: path }, ['init']);
  const copies = sources.map((_, i) => join(work, `${name}-${i}`));
  for (const copy of copies) await cp(path, copy, { recursive: true });
  const packs: string[][] = [];
  for (const [i, copy] of copies.entries()) {
    await restic({ repo: copy }, ['backup', sources[i]]);
    packs.push((await packFiles(copy)).map((p) => p.id));
    for (const folder of ['data', 'index', 'snapshots'])
      await cp(join(copy, folder), join(path, folder), { recursive: true, force: false });
  }
  return { path, packs };
}

async function check(repo: string): Promise<{ code: number | null; errors: string[]; stderr: string }> {
  const run = await ferry(['repo', 'check', '-r', repo, '--read-data', '--json']);
  assert.ok(!hasStackTrace(run.stderr), run.stderr);
  return { code: run.code, errors: parseJSON<{ errors: string[] }>(run).errors, stderr: run.stderr };
}

/** Restores every snapshot with ferry and compares each file with its source. */
async function assertRestores(repo: string, count: number): Promise<void> {
  const snaps = await resticJSON<{ id: string; paths: string[] }[]>({ repo }, ['snapshots']);
  assert.equal(snaps.length, count);
  for (const s of snaps) {
    const target = await mkdtemp(join(work, 'restored-'));
    await ferryOK(['repo', 'restore', '-r', repo, s.id, '--target', target]);
    const [src] = s.paths;
    for (const f of ['shared.bin', `${src.split('/').pop()}.bin`]) {
      const want = await readFile(join(src, f)).catch(() => undefined);
      if (want)
        assert.ok((await readFile(join(target, src, f))).equals(want), `${f} of snapshot ${s.id.slice(0, 8)} differs`);
    }
  }
}

/** Blobs and their copies as the packs themselves hold them (their headers), whatever an index says. */
async function storedCopies(path: string): Promise<{ blobs: number; copies: number }> {
  const repo = await Repository.open(new FsBackend(path), testPassword);
  const ids = new Set<string>();
  let copies = 0;
  for (const p of await packFiles(path)) {
    for (const b of await repo.readPackHeader(p.id, p.size)) {
      ids.add(b.type + b.id);
      copies++;
    }
  }
  return { blobs: ids.size, copies };
}

test('blobs stored twice by restic: check passes, restore is exact, prune leaves an index restic check --read-data accepts', async () => {
  const { path } = await duplicated('twice', [await source('a', 2), await source('b', 3)]);
  const before = await storedCopies(path);
  assert.ok(before.copies > before.blobs, 'the fixture holds blobs in two packs');
  await restic({ repo: path }, ['check', '--read-data']);

  const checked = await check(path);
  assert.deepEqual(checked.errors, [], 'no false size errors: a pack counts every blob it holds');
  assert.equal(checked.code, 0, checked.stderr);
  await assertRestores(path, 2);

  const pruned = await ferryOK(['repo', 'prune', '-r', path, '--json']);
  assert.ok(!hasStackTrace(pruned.stderr));
  await restic({ repo: path }, ['check', '--read-data']);
  const after = await storedCopies(path);
  assert.equal(after.copies, after.blobs, 'prune keeps one copy of each blob');
  assert.equal(after.blobs, before.blobs);
  assert.deepEqual((await check(path)).errors, []);
  await assertRestores(path, 2);
});

test('a damaged byte in a pack whose blobs all live in another pack too fails check --read-data, naming that pack', async () => {
  const { path, packs } = await duplicated('copies', [await source('c', 4), await source('d', undefined)]);
  const repo = await Repository.open(new FsBackend(path), testPassword);
  // the second backup's data pack: every blob in it (shared.bin's) is in the first backup's data pack too
  let victim: { pack: string; offset: number } | undefined;
  for (const pack of packs[1].filter((p) => !packs[0].includes(p))) {
    const data = (await repo.readPackHeader(pack)).find((b) => b.type === 'data');
    if (data) victim = { pack, offset: data.offset + (data.length >> 1) };
  }
  assert.ok(victim, 'the second backup wrote a data pack');
  assert.deepEqual((await check(path)).errors, [], 'undamaged, the repository checks clean');

  await flipByte(join(path, 'data', victim.pack.slice(0, 2), victim.pack), victim.offset);
  const { code, errors } = await check(path);
  assert.equal(code, 1);
  assert.ok(
    errors.length > 0 && errors.every((e) => e.includes(victim.pack)),
    `errors name only the damaged pack:\n${errors.join('\n')}`,
  );
  await assert.rejects(restic({ repo: path }, ['check', '--read-data']), /failed/, 'restic fails it too');
});
