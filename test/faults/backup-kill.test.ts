// A backup killed with SIGKILL at any point resumes: the next run completes, uploads only what the killed run had
// not stored (packs it left unindexed are adopted, not sent again), the repository holds exactly one snapshot and
// restic verifies and restores every byte. Each kill point is a real `ferry repo backup` process on its own
// repository; the points are chosen by pack count with seeded delays, or exactly through test/faults/kill-driver.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { ferryOK, parseJSON, spawnFerry } from '../support/ferry-cli.ts';
import type { FerryRun } from '../support/ferry-cli.ts';
import { randomBytes, testKDF, testPassword, testPolynomial } from '../support/repo.ts';
import { packFiles, storedFiles, tempFiles, totalSize } from '../support/repo-files.ts';
import { restic, resticJSON } from '../support/restic.ts';
import { seededInt, seededRandom, testSeed } from '../support/seeded.ts';

const MiB = 1024 * 1024;
const packSizeMiB = 1;
/** pack headers differ with how blobs are grouped into packs; nothing else may differ from the reference */
const headerSlack = 64 * 1024;
const seed = testSeed(20240611);
const random = seededRandom(seed);
const killDriver = join(import.meta.dirname, 'kill-driver.ts');

const work = await mkdtemp(join(tmpdir(), 'ferry-faults-kill-'));
const source = join(work, 'source');
test.after(() => rm(work, { recursive: true, force: true }));

/** 24 MiB of incompressible data in large files (many 1 MiB packs) plus small files and text. */
async function makeDataset(dir: string): Promise<void> {
  await mkdir(join(dir, 'small'), { recursive: true });
  for (let i = 0; i < 8; i++) await writeFile(join(dir, `big-${i}.bin`), randomBytes(3 * MiB, 100 + i));
  for (let i = 0; i < 60; i++) await writeFile(join(dir, 'small', `f${i}`), randomBytes(200 + i * 97, 1000 + i));
  await writeFile(join(dir, 'log.txt'), 'a line of a log file that compresses well\n'.repeat(20_000));
}

await makeDataset(source);

async function newRepo(name: string): Promise<string> {
  const path = join(work, name);
  const repo = await Repository.init(new FsBackend(path), testPassword, { kdf: testKDF, polynomial: testPolynomial });
  await repo.close();
  return path;
}

interface Summary {
  snapshot_id: string;
  data_blobs: number;
  tree_blobs: number;
  data_added_packed: number;
  packs_written: number;
  pack_bytes_written: number;
  packs_adopted: number;
}

const backupArgs = (repo: string) => [
  'repo',
  'backup',
  '-r',
  repo,
  '--json',
  '--pack-size',
  String(packSizeMiB),
  '--host',
  'kill-test',
  source,
];

// the uninterrupted run, on a repository with the same chunker polynomial: what storing the dataset costs
const reference = parseJSON<Summary>(await ferryOK(backupArgs(await newRepo('reference'))));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a backup that pauses right after the given save (see kill-driver.ts), waits a seeded moment while the
 * rest of the process runs on, and SIGKILLs it from outside.
 */
async function killWhen(repo: string, point: string): Promise<FerryRun> {
  const mark = join(work, `pause-${randomUUID()}`);
  const { child, done } = spawnFerry(backupArgs(repo), {
    entry: killDriver,
    env: { FERRY_TEST_KILL: `${point}:pause`, FERRY_TEST_PAUSE_MARK: mark },
  });
  let exited = false;
  void done.then(() => {
    exited = true;
  });
  while (!exited && !existsSync(mark)) await sleep(10);
  if (!exited) {
    await sleep(seededInt(random, 0, 40));
    child.kill('SIGKILL');
  }
  const run = await done;
  assert.equal(run.signal, 'SIGKILL', `the backup was not stopped after ${point} (exit ${run.code}): ${run.stderr}`);
  return run;
}

/** Runs the backup through the kill driver, which SIGKILLs the process itself at an exact save. */
async function killAt(repo: string, point: string): Promise<FerryRun> {
  const run = await spawnFerry(backupArgs(repo), { entry: killDriver, env: { FERRY_TEST_KILL: point } }).done;
  assert.equal(run.signal, 'SIGKILL', `the backup was not killed at ${point} (exit ${run.code}): ${run.stderr}`);
  return run;
}

interface AfterKill {
  stored: number;
  packs: number;
  indexFiles: number;
}

async function afterKill(repo: string): Promise<AfterKill> {
  assert.deepEqual(await storedFiles(repo, 'snapshots'), [], 'a killed backup leaves no snapshot');
  const packs = await packFiles(repo);
  return { stored: totalSize(packs), packs: packs.length, indexFiles: (await storedFiles(repo, 'index')).length };
}

/** Blobs that more than one pack holds, read from the packs' own headers. */
async function blobsStoredTwice(path: string): Promise<string[]> {
  const repo = await Repository.open(new FsBackend(path), testPassword);
  const packsOf = new Map<string, string[]>();
  for await (const f of repo.backend.list('pack')) {
    for (const b of await repo.readPackHeader(f.name, f.size)) {
      const key = `${b.type} ${b.id.slice(0, 12)}`;
      packsOf.set(key, [...(packsOf.get(key) ?? []), f.name.slice(0, 12)]);
    }
  }
  await repo.close();
  return [...packsOf].filter(([, packs]) => packs.length > 1).map(([blob, packs]) => `${blob} in ${packs.join(', ')}`);
}

/** The rerun completes, uploads no more than the killed run left unstored, and restic agrees with the result. */
async function resumeAndVerify(repo: string, killed: AfterKill): Promise<Summary> {
  const second = parseJSON<Summary>(await ferryOK(backupArgs(repo)));
  const after = await packFiles(repo);
  assert.equal(
    totalSize(after) - killed.stored,
    second.pack_bytes_written,
    'the stats count exactly the pack bytes that reached storage',
  );
  assert.deepEqual(await blobsStoredTwice(repo), [], 'no blob is stored twice');
  const notStored = reference.pack_bytes_written - killed.stored;
  assert.ok(
    second.pack_bytes_written <= notStored + headerSlack,
    `the rerun uploaded ${second.pack_bytes_written} bytes where only ${notStored} were not stored yet (${JSON.stringify({ killed, second })})`,
  );
  assert.ok(second.data_added_packed <= second.pack_bytes_written);
  if (killed.indexFiles === 0)
    assert.equal(second.packs_adopted, killed.packs, 'every pack of the killed run is adopted');

  // like restic, ferry leaves a dead process's lock for `unlock` to remove; restic refuses an exclusive lock until then
  const unlocked = parseJSON<{ removed: { id: string }[] }>(await ferryOK(['repo', 'unlock', '-r', repo, '--json']));
  assert.equal(unlocked.removed.length, 1, 'the killed run left its lock, and only that one');
  const snaps = await resticJSON<{ id: string }[]>({ repo }, ['snapshots']);
  assert.deepEqual(
    snaps.map((s) => s.id),
    [second.snapshot_id],
    'exactly one snapshot',
  );
  await restic({ repo }, ['check', '--read-data']);
  const target = join(work, `${repo.split('/').pop()}-restored`);
  await restic({ repo }, ['restore', second.snapshot_id, '--target', target]);
  assert.deepEqual(await compareTrees(source, join(target, source), { sparse: false }), []);
  await rm(target, { recursive: true, force: true });
  return second;
}

test(`reference backup writes many packs (seed ${seed})`, () => {
  assert.ok(reference.packs_written >= 12, `${reference.packs_written} packs`);
});

test('killed while taking the lock, before any data moved', async () => {
  const repo = await newRepo('kill-lock');
  await killWhen(repo, 'lock:1');
  const killed = await afterKill(repo);
  assert.equal(killed.packs, 0);
  await resumeAndVerify(repo, killed);
});

for (const [name, lo, hi] of [
  ['early', 2, 5],
  ['late', 8, 11],
] as const) {
  const k = seededInt(random, lo, hi);
  test(`killed ${name}, after ${k} packs reached storage (seed ${seed})`, async () => {
    const repo = await newRepo(`kill-${name}`);
    await killWhen(repo, `pack:${k}`);
    const killed = await afterKill(repo);
    // the k-th save is complete; the save started just before it may still have been running (two run side by side)
    assert.ok(killed.packs >= k - 1, `${killed.packs} packs stored`);
    await resumeAndVerify(repo, killed);
  });
}

test('killed right after a pack was stored, before any index names it: the rerun adopts it', async () => {
  const repo = await newRepo('kill-pack-after');
  await killAt(repo, 'pack:3:after');
  const killed = await afterKill(repo);
  assert.equal(killed.indexFiles, 0);
  // uploads run side by side, so the third save to finish may be the only one that did
  assert.ok(killed.packs >= 1);
  const second = await resumeAndVerify(repo, killed);
  assert.equal(second.packs_adopted, killed.packs);
});

test('killed half-way through writing a pack: the partial file is ignored by ferry and restic', async () => {
  const repo = await newRepo('kill-pack-during');
  await killAt(repo, 'pack:5:during');
  assert.ok(
    (await tempFiles(repo)).some((f) => f.endsWith('-tmp-killeddriver')),
    'the partial pack is on disk',
  );
  await resumeAndVerify(repo, await afterKill(repo));
});

test('killed while saving the snapshot, all data stored: the rerun uploads no data, only changed parent trees', async () => {
  const repo = await newRepo('kill-snapshot');
  await killAt(repo, 'snapshot:1:before');
  const killed = await afterKill(repo);
  assert.ok(killed.stored >= reference.pack_bytes_written - headerSlack);
  const second = await resumeAndVerify(repo, killed);
  assert.equal(second.data_blobs, 0);
  // only the trees of the source's parent directories may be new (others keep writing into the temp folder)
  assert.ok(second.tree_blobs <= source.split('/').length - 1, `${second.tree_blobs} new trees`);
  assert.ok(second.pack_bytes_written < 16 * 1024, `${second.pack_bytes_written} bytes uploaded`);
});
