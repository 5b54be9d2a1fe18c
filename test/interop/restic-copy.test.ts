// ferry copies snapshots between repositories with different passwords and chunker polynomials, and restic, the
// oracle, agrees with the result: its check passes on the destination, its restore of a copy gives the original
// tree, and its own copy and ferry's each recognise what the other copied.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { backup } from '../../src/engine/operations/backup.ts';
import { copy } from '../../src/engine/operations/copy.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { listSnapshots } from '../../src/engine/repository/snapshots.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { packFiles, storedFiles, totalSize } from '../support/repo-files.ts';
import { randomBytes, testKDF, testPassword, testPolynomial } from '../support/repo.ts';
import { restic, resticJSON } from '../support/restic.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-copy-'));
test.after(() => rm(work, { recursive: true, force: true }));
const otherPassword = 'a second site, another password';

const ferryData = join(work, 'ferry-data');
const resticData = join(work, 'restic-data');
await makeFixtureTree(ferryData, { smallFiles: 80 });
await makeFixtureTree(resticData, { smallFiles: 40, seed: 5, bigFile: 1 << 20 });

// the source: one snapshot ferry wrote, one restic wrote
const sourcePath = join(work, 'source');
const source = await Repository.init(new FsBackend(sourcePath), testPassword, {
  kdf: testKDF,
  polynomial: testPolynomial,
});
const fromFerry = (await backup(source, { paths: [ferryData], tags: ['ferry'], hostname: 'site-a' })).snapshotID;
await restic({ repo: sourcePath }, ['backup', '--host', 'site-a', '--tag', 'restic', resticData]);
const fromRestic = (await listSnapshots(await open(sourcePath))).map((e) => e.id).find((id) => id !== fromFerry)!;

function open(path: string, password = testPassword): Promise<Repository> {
  return Repository.open(new FsBackend(path), password);
}

/** A destination with its own password and (unless given) its own random polynomial. */
async function destination(name: string, polynomial?: bigint): Promise<{ path: string; repo: Repository }> {
  const path = join(work, name);
  return { path, repo: await Repository.init(new FsBackend(path), otherPassword, { kdf: testKDF, polynomial }) };
}

interface ResticSnapshot {
  id: string;
  original?: string;
  parent?: string;
  tags?: string[];
  hostname: string;
  paths: string[];
}

test('ferry copies a ferry and a restic snapshot; restic checks every byte and restores both trees exactly', async () => {
  const { path, repo } = await destination('plain');
  const r = await copy(await open(sourcePath), repo);
  assert.equal(r.samePolynomial, false, 'the destination chose its own polynomial');
  assert.deepEqual(
    r.snapshots.map((s) => [s.source, s.skipped]),
    [
      [fromFerry, false],
      [fromRestic, false],
    ],
  );
  await restic({ repo: path, password: otherPassword }, ['check', '--read-data']);
  const copies = await resticJSON<ResticSnapshot[]>({ repo: path, password: otherPassword }, ['snapshots']);
  assert.deepEqual(
    copies.map((s) => [s.original, s.parent, s.tags, s.hostname]),
    [
      [fromFerry, undefined, ['ferry'], 'site-a'],
      [fromRestic, undefined, ['restic'], 'site-a'],
    ],
  );
  for (const [copyID, data] of [
    [r.snapshots[0].copy, ferryData],
    [r.snapshots[1].copy, resticData],
  ]) {
    const target = join(work, `restored-${copyID}`);
    await restic({ repo: path, password: otherPassword }, ['restore', copyID, '--target', target]);
    assert.deepEqual(await compareTrees(data, join(target, data), { sparse: false }), []);
  }
});

test("a second copy transfers nothing and adds no snapshot; restic copy sees ferry's copies as done", async () => {
  const { path, repo } = await destination('again');
  await copy(await open(sourcePath), repo);
  const before = {
    packs: await packFiles(path),
    snapshots: await storedFiles(path, 'snapshots'),
    index: await storedFiles(path, 'index'),
  };
  const again = await copy(await open(sourcePath), await open(path, otherPassword));
  assert.deepEqual(
    again.snapshots.map((s) => s.skipped),
    [true, true],
  );
  assert.deepEqual([again.stats.packs, again.stats.dataBlobs, again.stats.treeBlobs], [0, 0, 0]);
  assert.deepEqual(await packFiles(path), before.packs);
  assert.deepEqual(await storedFiles(path, 'snapshots'), before.snapshots);
  assert.deepEqual(await storedFiles(path, 'index'), before.index);
  await resticFromSource(path, ['copy']);
  assert.deepEqual(await storedFiles(path, 'snapshots'), before.snapshots, 'restic copied nothing either');
});

test("ferry sees restic's copies as done and adds nothing", async () => {
  const path = join(work, 'restic-copied');
  await resticFromSource(path, ['init', '--copy-chunker-params']);
  await resticFromSource(path, ['copy']);
  const before = await storedFiles(path, 'snapshots');
  const r = await copy(await open(sourcePath), await open(path, otherPassword));
  assert.equal(r.samePolynomial, true);
  assert.deepEqual(
    r.snapshots.map((s) => s.skipped),
    [true, true],
  );
  assert.equal(r.stats.packs, 0);
  assert.deepEqual(await storedFiles(path, 'snapshots'), before);
});

test('into a destination holding most of the data, only the new blobs are uploaded', async () => {
  const { path, repo } = await destination('most', testPolynomial);
  await copy(await open(sourcePath), repo, { snapshots: [fromFerry.slice(0, 10)] });
  // the same tree with one new file and one grown file
  const grown = join(work, 'grown');
  // cp -a: node's cp trips on the fixture's non-UTF-8 names
  execFileSync('cp', ['-a', ferryData, grown]);
  const fresh = randomBytes(3 << 20, 77);
  await writeFile(join(grown, 'new.bin'), fresh);
  await appendFile(join(grown, 'text.txt'), 'one more line\n');
  const src = await open(sourcePath);
  const next = await backup(src, { paths: [grown], hostname: 'site-a' });
  const packsBefore = totalSize(await packFiles(path));
  const r = await copy(await open(sourcePath), await open(path, otherPassword), {
    snapshots: [next.snapshotID],
    filter: { hosts: ['nobody'] },
  });
  assert.deepEqual(
    r.snapshots.map((s) => [s.source, s.skipped]),
    [[next.snapshotID, false]],
    'a named snapshot is copied whatever the filter',
  );
  // exactly the blobs the backup itself found new: the new file's chunks and the grown file's last chunk
  assert.equal(r.stats.dataBlobs, next.stats.dataBlobs);
  const written = totalSize(await packFiles(path)) - packsBefore;
  assert.ok(
    written >= fresh.length && written < fresh.length + (256 << 10),
    `${written} bytes of packs for ${fresh.length} new bytes`,
  );
  await restic({ repo: path, password: otherPassword }, ['check', '--read-data']);
});

test('into a format version 1 repository (no compression), restic checks every byte of the copy', async () => {
  const path = join(work, 'version-1');
  await restic({ repo: path, password: otherPassword }, ['init', '--repository-version', '1']);
  const r = await copy(await open(sourcePath), await open(path, otherPassword), { snapshots: [fromRestic] });
  assert.deepEqual(
    r.snapshots.map((s) => s.skipped),
    [false],
  );
  await restic({ repo: path, password: otherPassword }, ['check', '--read-data']);
  const target = join(work, 'restored-v1');
  await restic({ repo: path, password: otherPassword }, ['restore', r.snapshots[0].copy, '--target', target]);
  assert.deepEqual(await compareTrees(resticData, join(target, resticData), { sparse: false }), []);
});

test('snapshots are chosen by host, tag and path as restic chooses them', async () => {
  const { repo } = await destination('filtered');
  const byTag = await copy(await open(sourcePath), repo, { filter: { tags: [['restic']] } });
  assert.deepEqual(
    byTag.snapshots.map((s) => s.source),
    [fromRestic],
  );
  const byPath = await copy(await open(sourcePath), repo, { filter: { paths: [ferryData] } });
  assert.deepEqual(
    byPath.snapshots.map((s) => s.source),
    [fromFerry],
  );
  const none = await copy(await open(sourcePath), repo, { filter: { hosts: ['elsewhere'] } });
  assert.deepEqual(none.snapshots, []);
});

/** restic's init or copy in the destination at path, reading the source repository */
async function resticFromSource(path: string, args: string[]): Promise<void> {
  const from = ['--from-repo', sourcePath, '--from-password-file', await passwordFile()];
  await restic({ repo: path, password: otherPassword }, [...args, ...from]);
}

let passwordPath: string | undefined;
async function passwordFile(): Promise<string> {
  passwordPath ??= join(work, 'source-password');
  await writeFile(passwordPath, testPassword);
  return passwordPath;
}
