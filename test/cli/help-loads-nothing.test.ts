// Help lists a command's sub-commands without loading them: `ferry --help` once loaded every command group, the
// Kubernetes client's modules among them (0.6 s of CPU). The sub-commands' metas are given where they are named
// (lazy.ts), so each must be the one its module declares, or help would describe a command differently from itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandDef, SubCommandsDef } from 'citty';
import { main } from '../../src/cli/commands.ts';
import type { LazyCommand } from '../../src/cli/lazy.ts';
import { cliEntry, nodeBin } from '../support/ferry-cli.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-help-loads-'));
test.after(() => rm(work, { recursive: true, force: true }));

/** The modules `ferry args...` loads, with the exit code and output. */
async function loadsOf(...args: string[]): Promise<{ modules: string[]; code: number | null; stdout: string }> {
  const file = join(work, `loads-${args.join('-')}`);
  const child = spawn(
    nodeBin,
    ['--import', join(import.meta.dirname, '../support/record-loads.mjs'), cliEntry, ...args],
    {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', FERRY_TEST_LOADS: file },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let stdout = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { modules: (await readFile(file, 'utf8')).split('\n').filter(Boolean), code, stdout };
}

test('`ferry --help` lists every command without loading any of them, nor the Kubernetes client', async () => {
  const { modules, code, stdout } = await loadsOf('--help');
  assert.equal(code, 0);
  for (const name of ['backup', 'restore', 'repo', 'location', 'install', 'doctor', 'copy-policy'])
    assert.match(stdout, new RegExp(`^ +${name} +\\S`, 'm'));
  const loaded = modules.filter((m) =>
    /\/src\/cli\/(kube|repo|location|install|doctor|schedule|copy)\/|@kubernetes/.test(m),
  );
  assert.deepEqual(loaded, []);
});

test('`ferry repo --help` lists the repository commands without loading them, nor the engine', async () => {
  const { modules, code, stdout } = await loadsOf('repo', '--help');
  assert.equal(code, 0);
  assert.match(stdout, /^ +backup +Back up files/m);
  const loaded = modules.filter((m) => /\/src\/(cli\/repo\/(?!index\.ts)|engine\/)/.test(m));
  assert.deepEqual(loaded, []);
});

/** Every lazy sub-command under `cmd`, by its path of names, loading each group to reach the ones below it. */
async function lazyCommands(cmd: CommandDef, path: string[] = []): Promise<[string, LazyCommand][]> {
  const subs = (await cmd.subCommands) as SubCommandsDef | undefined;
  const found: [string, LazyCommand][] = [];
  for (const [name, sub] of Object.entries(subs ?? {})) {
    if (typeof sub !== 'function' || !('meta' in sub)) continue;
    found.push([[...path, name].join(' '), sub as LazyCommand]);
    found.push(...(await lazyCommands(await (sub as LazyCommand)(), [...path, name])));
  }
  return found;
}

test("a lazy sub-command's meta is the one its module declares", async () => {
  const lazies = await lazyCommands(main);
  assert.ok(lazies.length >= 20, `found ${lazies.length}`);
  for (const [path, lazy] of lazies) assert.deepEqual(lazy.meta, (await lazy()).meta, `ferry ${path}`);
});
