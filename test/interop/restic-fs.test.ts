// ferry and restic read each other's repositories (format v2) on the filesystem backend.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { lstat, mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { backup } from '../../src/engine/operations/backup.ts';
import { restoreTree } from '../../src/engine/restore/restorer.ts';
import { listSnapshots, forgetSnapshots } from '../../src/engine/repository/snapshots.ts';
import { prune } from '../../src/engine/operations/prune.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { restic, resticJSON } from '../support/restic.ts';
import { randomBytes, testKDF, testPassword } from '../support/repo.ts';
import { toolPath } from '../support/tools.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-interop-'));
const source = join(work, 'source');
await makeFixtureTree(source, { smallFiles: 200 });

test.after(() => rm(work, { recursive: true, force: true }));

async function ferryRepo(name: string): Promise<{ path: string; repo: Repository }> {
  const path = join(work, name);
  return { path, repo: await Repository.init(new FsBackend(path), testPassword, { kdf: testKDF }) };
}

test('ferry writes; restic check --read-data passes and restic restore reproduces the tree', async () => {
  const { path, repo } = await ferryRepo('ferry-writes');
  const r = await backup(repo, { paths: [source], tags: ['interop'] });
  assert.ok(r.stats.dataBlobs > 10);
  await restic({ repo: path }, ['check', '--read-data']);
  const target = join(work, 'restic-restored');
  await restic({ repo: path }, ['restore', r.snapshotID, '--target', target]);
  assert.deepEqual(await compareTrees(source, join(target, source), { sparse: false }), []);
  const snaps = await resticJSON<{ id: string; tags: string[] }[]>({ repo: path }, ['snapshots']);
  assert.deepEqual(
    snaps.map((s) => [s.id, s.tags]),
    [[r.snapshotID, ['interop']]],
  );
});

test('restic writes; ferry restores the same tree, sparse files staying sparse', async () => {
  const path = join(work, 'restic-writes');
  await restic({ repo: path }, ['init']);
  await restic({ repo: path }, ['backup', source]);
  const repo = await Repository.open(new FsBackend(path), testPassword);
  await repo.loadIndex();
  const [snap] = await listSnapshots(repo);
  const target = join(work, 'ferry-restored');
  await restoreTree(repo, snap.snapshot.tree, { target });
  assert.deepEqual(await compareTrees(source, join(target, source)), []);
});

test('restic backs up a dataset, then ferry backs up the same data into that repository adding no data blob', async () => {
  const path = join(work, 'dedup');
  await restic({ repo: path }, ['init']);
  await restic({ repo: path }, ['backup', source]);
  const repo = await Repository.open(new FsBackend(path), testPassword);
  const r = await backup(repo, { paths: [source] });
  assert.equal(r.stats.dataBlobs, 0, 'every data blob was already stored by restic');
  assert.equal(r.snapshot.summary!.dataAdded <= r.stats.dataAdded, true);
  await restic({ repo: path }, ['check', '--read-data']);
});

test('after ferry forget + prune, restic check --read-data passes and the remaining snapshot restores', async () => {
  const { path, repo } = await ferryRepo('prune');
  const first = await backup(repo, { paths: [source] });
  const extra = join(work, 'extra');
  await makeFixtureTree(extra, { smallFiles: 40, seed: 7, bigFile: 2 << 20 });
  const second = await backup(repo, { paths: [source, extra] });
  await forgetSnapshots(repo, [second.snapshotID]);
  const pruned = await prune(repo);
  assert.ok(pruned.packsDeleted > 0, 'data only the forgotten snapshot used is deleted');
  await restic({ repo: path }, ['check', '--read-data']);
  const target = join(work, 'after-prune');
  await restic({ repo: path }, ['restore', first.snapshotID, '--target', target]);
  assert.deepEqual(await compareTrees(source, join(target, source), { sparse: false }), []);
  assert.deepEqual(
    (await listSnapshots(repo)).map((s) => s.id),
    [first.snapshotID],
  );
});

function xattrsOf(path: string): string {
  return execFileSync('getfattr', ['--absolute-names', '-d', '-m', '-', '-e', 'hex', path])
    .toString()
    .split('\n')
    .slice(1)
    .join('\n');
}

test('extended attributes, when asked for, go through ferry backup, restic restore and ferry restore', async () => {
  const { path, repo } = await ferryRepo('xattrs');
  const warnings: string[] = [];
  const r = await backup(repo, { paths: [source], xattrs: true, onWarning: (m) => warnings.push(m) });
  // read through the system calls: names that are not UTF-8 are no exception
  assert.deepEqual(warnings, []);
  const viaRestic = join(work, 'xattrs-restic');
  await restic({ repo: path }, ['restore', r.snapshotID, '--target', viaRestic]);
  const viaFerry = join(work, 'xattrs-ferry');
  await repo.loadIndex();
  await restoreTree(repo, r.snapshot.tree, { target: viaFerry, xattrs: true });
  for (const name of ['text.txt', 'deep']) {
    const want = xattrsOf(join(source, name));
    assert.match(want, /user\.ferry\./);
    assert.equal(xattrsOf(join(viaRestic, source, name)), want, `restic restore of ${name}`);
    assert.equal(xattrsOf(join(viaFerry, source, name)), want, `ferry restore of ${name}`);
  }
});

test('ferry restore and restic restore of one snapshot agree on every entry, times to the nanosecond', async () => {
  const { path, repo } = await ferryRepo('agree');
  const r = await backup(repo, { paths: [source] });
  const viaRestic = join(work, 'agree-restic');
  await restic({ repo: path }, ['restore', r.snapshotID, '--target', viaRestic]);
  const viaFerry = join(work, 'agree-ferry');
  await repo.loadIndex();
  await restoreTree(repo, r.snapshot.tree, { target: viaFerry });
  // atimes first: comparing contents reads the files, which moves them
  for (const name of ['text.txt', 'deep', 'link-to-text', 'fifo']) {
    const [a, b] = await Promise.all([
      lstat(join(viaRestic, source, name), { bigint: true }),
      lstat(join(viaFerry, source, name), { bigint: true }),
    ]);
    assert.deepEqual([b.atimeNs, b.mtimeNs], [a.atimeNs, a.mtimeNs], name);
  }
  // every entry, mtimes to the nanosecond, and both as the source was
  assert.deepEqual(await compareTrees(join(viaRestic, source), join(viaFerry, source)), []);
  assert.deepEqual(await compareTrees(source, join(viaFerry, source)), []);
});

test('a sparse block image backed up as one stream: zero ranges cost nothing, restic dump and ferry restore give the same bytes', async () => {
  const { path, repo } = await ferryRepo('stream');
  const img = join(work, 'disk.img');
  const fh = await open(img, 'w');
  await fh.truncate(64 << 20);
  for (let i = 0; i < 4; i++) await fh.write(randomBytes(1 << 20, 50 + i), 0, 1 << 20, i * (16 << 20) + 4097);
  await fh.close();
  const r = await backup(repo, { paths: [img], stream: { name: 'volume.img' } });
  assert.ok(
    r.stats.dataAdded < 4 * (1 << 20) + 4 * (1 << 20) + (512 << 10),
    `only the data ranges and their chunk neighbours are stored (${r.stats.dataAdded})`,
  );
  const dumped = join(work, 'dumped.img');
  await writeFile(
    dumped,
    execFileSync(await toolPath('restic'), ['-r', path, 'dump', r.snapshotID, '/volume.img'], {
      env: { ...process.env, RESTIC_PASSWORD: testPassword },
      maxBuffer: 128 << 20,
    }),
  );
  const restored = join(work, 'restored.img');
  await repo.loadIndex();
  await restoreTree(repo, r.snapshot.tree, { target: restored, subpath: '/volume.img' });
  const digest = async (p: string) =>
    createHash('sha256')
      .update(await readFile(p))
      .digest('hex');
  assert.equal(await digest(dumped), await digest(img));
  assert.equal(await digest(restored), await digest(img));
  assert.ok((await stat(restored)).blocks < (await stat(img)).blocks + 2048, 'the restored image stays sparse');
});
