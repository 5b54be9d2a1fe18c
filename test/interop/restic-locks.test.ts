// ferry's and restic's locks honour each other on one repository: restic sees the shared lock of a ferry restore and
// will not prune, forget or check under it; ferry sees restic's locks and will not prune or check beside a restic
// backup, nor restore beside a restic prune; and `ferry repo` commands say who holds the lock, or wait with
// --retry-lock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { LockConflictError } from '../../src/engine/lock/lock.ts';
import { backup } from '../../src/engine/operations/backup.ts';
import { check } from '../../src/engine/operations/check.ts';
import { prune } from '../../src/engine/operations/prune.ts';
import { restore } from '../../src/engine/operations/restore.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { ferry, spawnFerry } from '../support/ferry-cli.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { gated } from '../support/gated-backend.ts';
import { restic } from '../support/restic.ts';
import { randomBytes, testKDF, testPassword } from '../support/repo.ts';
import { toolPath } from '../support/tools.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-locks-'));
test.after(() => rm(work, { recursive: true, force: true }));
const source = join(work, 'source');
await makeFixtureTree(source, { smallFiles: 50, bigFile: 3 << 20 });
const path = join(work, 'repo');
const first = await (async () => {
  const repo = await Repository.init(new FsBackend(path), testPassword, { kdf: testKDF });
  const r = await backup(repo, { paths: [source] });
  // a second snapshot with data of its own, so prune has something to free
  await writeFile(join(work, 'extra'), randomBytes(1 << 20, 9));
  await backup(repo, { paths: [join(work, 'extra')] });
  return r.snapshotID;
})();

const open = (backend = new FsBackend(path)) => Repository.open(backend, testPassword);

/** The lock files (restic writes each under a temporary name first, then renames it). */
async function lockFiles(): Promise<string[]> {
  return (await readdir(join(path, 'locks')).catch(() => [])).filter((n) => /^[0-9a-f]{64}$/.test(n)).sort();
}

/** Resolves once a lock file appears in the repository. */
function lockAppears(): Promise<void> {
  return new Promise((resolve) => {
    const w = watch(join(path, 'locks'), () => void lockFiles().then((l) => l.length > 0 && (w.close(), resolve())));
    void lockFiles().then((l) => l.length > 0 && (w.close(), resolve()));
  });
}

async function resticChild(args: string[]): Promise<{ child: ChildProcess; done: Promise<number | null> }> {
  const child = spawn(await toolPath('restic'), ['-r', path, '--no-cache', ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, RESTIC_PASSWORD: testPassword },
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  return { child, done: new Promise((r) => child.once('close', (code) => r(code))) };
}

test('restic will not prune, forget or check while a ferry restore holds its shared lock, and reads that lock', async () => {
  const gate = gated(new FsBackend(path));
  const target = join(work, 'restored-1');
  const restoring = restore(await Repository.open(gate.view, testPassword), {
    snapshot: first.slice(0, 8),
    target: { kind: 'directory', path: target },
  });
  await gate.reading;
  const [lock] = await lockFiles();
  assert.ok(lock, 'the restore holds a lock file while it reads');
  const info = JSON.parse(await restic({ repo: path }, ['cat', 'lock', lock])) as { exclusive: boolean; pid: number };
  assert.deepEqual(
    [info.exclusive, info.pid],
    [false, process.pid],
    'restic reads it as a shared lock of this process',
  );
  for (const args of [['prune'], ['forget', '--keep-last', '1', '--prune'], ['check']]) {
    await assert.rejects(
      restic({ repo: path }, args),
      /repository is already locked by PID/,
      `restic ${args.join(' ')}`,
    );
  }
  gate.open();
  const r = await restoring;
  assert.equal(r.snapshot.id, first);
  assert.deepEqual(await compareTrees(source, join(target, source)), []);
  assert.deepEqual(await lockFiles(), [], 'the restore removed its lock');
  await restic({ repo: path }, ['check']);
});

test('ferry will not prune or check beside a restic backup, but restores beside it; repo prune --retry-lock waits for it', async () => {
  const backing = await resticChild(['backup', '--stdin', '--stdin-filename', 'piped']);
  backing.child.stdin!.write(randomBytes(1 << 16, 3));
  await lockAppears();
  const pid = backing.child.pid;
  await assert.rejects(
    prune(await open()),
    (err: Error) =>
      err instanceof LockConflictError && new RegExp(`locked by .*pid ${pid}, a shared lock`).test(err.message),
  );
  await assert.rejects(check(await open()), LockConflictError);
  const cli = await ferry(['repo', 'check', '-r', path]);
  assert.equal(cli.code, 1);
  assert.match(cli.stderr, new RegExp(`the repository is locked by .*pid ${pid}, a shared lock`));
  const target = join(work, 'restored-2');
  await restore(await open(), { snapshot: first, target: { kind: 'directory', path: target } });
  assert.deepEqual(await compareTrees(source, join(target, source)), []);

  const waiting = spawnFerry(['repo', 'prune', '-r', path, '--retry-lock', '2m']);
  await new Promise<void>((resolve) => {
    const said = (b: Buffer) => /the repository is locked by .*; waiting up to 120 s/.test(b.toString()) && resolve();
    waiting.child.stdout!.on('data', said);
    waiting.child.stderr!.on('data', said);
  });
  backing.child.stdin!.end();
  assert.equal(await backing.done, 0, 'the restic backup completed');
  const pruned = await waiting.done;
  assert.equal(pruned.code, 0, pruned.stderr);
  assert.deepEqual(await lockFiles(), []);
});

test('a ferry restore refuses, or waits for, the exclusive lock of a restic prune', async () => {
  const pruning = await resticChild(['prune']);
  await lockAppears();
  // restic waits 200 ms after writing its lock before it checks again: stopped here, it holds the lock for as long as
  // the test needs
  pruning.child.kill('SIGSTOP');
  try {
    const target = join(work, 'restored-3');
    await assert.rejects(
      restore(await open(), { snapshot: first, target: { kind: 'directory', path: target } }),
      /locked by .*an exclusive lock/,
    );
    const waited = restore(await open(), {
      snapshot: first,
      target: { kind: 'directory', path: target },
      lockWaitMs: 120_000,
    });
    await new Promise((r) => setTimeout(r, 500));
    pruning.child.kill('SIGCONT');
    assert.equal(await pruning.done, 0, 'the restic prune completed');
    await waited;
    assert.deepEqual(await compareTrees(source, join(target, source)), []);
  } finally {
    pruning.child.kill('SIGCONT');
  }
  assert.deepEqual(await lockFiles(), []);
});
