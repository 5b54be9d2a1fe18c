// `ferry` started from outside the checkout (a symlinked or linked bin, `npx ferry`, `kubectl ferry`) runs on whatever
// `node` comes first on PATH. On an older Node (Debian's, at /usr/bin/node) it moves to the Node npm installed beside
// it, or says in one line which Node it needs and exits 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const entry = fileURLToPath(new URL('../../src/entry/ferry.mjs', import.meta.url));
const oldNode = '/usr/bin/node';
const oldVersion = spawnSync(oldNode, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
assert.match(
  oldVersion,
  /^v(1\d|2[0-3])\./,
  `these tests start ferry with Debian's Node at ${oldNode} (.ci/run installs it), got '${oldVersion}'`,
);
// Debian's kubectl (which .ci/run installs) sits in /usr/bin too, so PATH holds no Node but the old one
const path = '/usr/bin:/bin';

const work = await mkdtemp(join(tmpdir(), 'ferry-start-'));
test.after(() => rm(work, { recursive: true, force: true }));

function run(bin: string, args: string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(bin, args, {
    cwd: work,
    encoding: 'utf8',
    env: { HOME: work, PATH: path, NO_COLOR: '1', ...env },
    timeout: 120_000,
  });
}

/** A symlink named `name` in a folder of its own, as `npm link` or a user's ~/bin would make it. */
async function linked(name: string, target: string): Promise<string> {
  const dir = await mkdtemp(join(work, 'bin-'));
  await symlink(target, join(dir, name));
  return join(dir, name);
}

/** A copy of the entry in a tree with no pinned Node, or with `node_modules/.bin/node` pointing at `node`. */
async function lonelyEntry(node?: string): Promise<string> {
  const root = await mkdtemp(join(work, 'pkg-'));
  await mkdir(join(root, 'src', 'entry'), { recursive: true });
  await copyFile(entry, join(root, 'src', 'entry', 'ferry.mjs'));
  if (node !== undefined) {
    await mkdir(join(root, 'node_modules', '.bin'), { recursive: true });
    await symlink(node, join(root, 'node_modules', '.bin', 'node'));
  }
  return join(root, 'src', 'entry', 'ferry.mjs');
}

test('a symlinked bin started by an older Node runs the command on the pinned Node, exit codes kept', async () => {
  const ferry = await linked('ferry', entry);
  const help = run(ferry, ['--help']);
  assert.equal(help.status, 0, help.stderr);
  assert.match(help.stdout, /USAGE ferry backup\|restore/);
  const bare = run(ferry, []);
  assert.equal(bare.status, 2, 'no arguments is bad usage');
  // an alias such as `alias ferry='node /path/to/ferry.mjs'`
  const named = run(oldNode, [entry, 'repo', '--help']);
  assert.equal(named.status, 0, named.stderr);
  assert.match(named.stdout, /USAGE ferry repo init/);
  const repo = join(work, 'repo');
  const init = run(ferry, ['repo', 'init', '--repo', repo], { FERRY_PASSWORD: 'secret' });
  assert.equal(init.status, 0, init.stderr);
  const wrong = run(ferry, ['repo', 'snapshots', '--repo', repo], { FERRY_PASSWORD: 'wrong' });
  assert.equal(wrong.status, 1, 'a failed command fails');
  assert.match(wrong.stderr, /password/);
});

/** Starts a backup that runs until stopped (an endless stream of zeros) through the bin, once it holds its lock. */
async function endlessBackup(name: string): Promise<{ pid: number; repo: string; exited: Promise<number | null> }> {
  const ferry = await linked('ferry', entry);
  const repo = join(work, name);
  assert.equal(run(ferry, ['repo', 'init', '--repo', repo], { FERRY_PASSWORD: 'secret' }).status, 0);
  // in a process group of its own, as a shell starts a command: a terminal's Ctrl-C goes to the whole group
  const child = spawn(ferry, ['repo', 'backup', '--repo', repo, '--stream', 'zero', '/dev/zero'], {
    cwd: work,
    env: { HOME: work, PATH: path, NO_COLOR: '1', FERRY_PASSWORD: 'secret' },
    stdio: 'ignore',
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for (let i = 0; i < 600 && (await readdir(join(repo, 'locks'))).length === 0; i++) await sleep(100);
  assert.equal((await readdir(join(repo, 'locks'))).length, 1, 'the backup took its lock');
  return { pid: child.pid!, repo, exited };
}

test('SIGTERM sent to the bin started by an older Node cancels the command cleanly: exit 3, lock removed', async () => {
  const backup = await endlessBackup('repo-sigterm');
  process.kill(backup.pid, 'SIGTERM');
  assert.equal(await backup.exited, 3);
  assert.deepEqual(await readdir(join(backup.repo, 'locks')), []);
});

test('Ctrl-C (SIGINT to the process group) reaches the command once: exit 3, lock removed', async () => {
  const backup = await endlessBackup('repo-sigint');
  process.kill(-backup.pid, 'SIGINT');
  assert.equal(await backup.exited, 3);
  assert.deepEqual(await readdir(join(backup.repo, 'locks')), []);
});

test('kubectl runs ferry as its plugin `kubectl ferry` through a kubectl-ferry link on PATH', async () => {
  const plugin = await linked('kubectl-ferry', entry);
  const r = spawnSync('kubectl', ['ferry', 'repo', '--help'], {
    cwd: work,
    encoding: 'utf8',
    env: { HOME: work, PATH: `${join(plugin, '..')}:${path}`, NO_COLOR: '1' },
    timeout: 120_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /restic format/);
});

test('with no Node 24 to be found, one line says which Node ferry needs and how to run it, and it exits 1', async () => {
  for (const pinned of [undefined, oldNode]) {
    const copy = await lonelyEntry(pinned);
    const r = run(await linked('ferry', copy), ['repo', 'snapshots', '--repo', work]);
    assert.equal(r.status, 1, `pinned node ${pinned}: ${r.stderr}`);
    assert.equal(r.stdout, '');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], /^ferry needs Node\.js 24 or later/);
    assert.ok(
      lines[0].includes(oldVersion.slice(1)) && lines[0].includes(oldNode),
      'it names the Node that started it',
    );
    assert.ok(lines[0].includes('npm ci') && lines[0].includes(copy), 'it says how to run it');
  }
});
