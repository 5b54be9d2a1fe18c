#!/usr/bin/env node
// The `ferry` command. Plain JavaScript on purpose, for two reasons. Started as a linked bin, through `npx`, a
// symlink or `kubectl ferry`, it runs on whatever `node` comes first on PATH, so it must parse on any Node that
// reads modules (no top-level await, no `??`, no named imports of new APIs) and get far enough to move to the Node
// ferry needs, or to say which in one line. And a TypeScript entry makes Node load its type stripper (a
// WebAssembly module) before anything can turn the compile cache on; with the cache on first, the TypeScript
// modules come out of the cache and nothing needs stripping.
import { existsSync, realpathSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const neededMajor = 24; // package.json's engines
const entry = realpathSync(fileURLToPath(import.meta.url));
const checkout = join(dirname(entry), '..', '..');

function majorOf(version) {
  return Number(String(version).replace(/^v/, '').split('.')[0]);
}

// node:child_process (and node:net under it) loads only on the paths that start another Node: about 8 ms of CPU that
// a command started on the right Node with the tunables set would pay for nothing
const childProcess = () => nodeModule.createRequire(import.meta.url)('child_process');

function versionOf(node) {
  try {
    return childProcess()
      .execFileSync(node, ['--version'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 10000,
      })
      .trim();
  } catch {
    return undefined;
  }
}

/** The Node npm installed for ferry (the `node` package), looked for as Node looks for modules: up from the entry. */
function pinnedNode() {
  for (let dir = dirname(entry); ; dir = dirname(dir)) {
    const node = join(dir, 'node_modules', '.bin', 'node');
    if (existsSync(node) && majorOf(versionOf(node)) >= neededMajor) return node;
    if (dirname(dir) === dir) return undefined;
  }
}

// glibc's malloc raises its mmap threshold to the size of each large block freed (up to 32 MiB), after which
// buffers of megabytes (pack reads, index files) come from the heap, where the small allocations made between them
// split the holes they leave and the heap only grows; a threshold fixed at 4 MiB keeps them out. Each thread that
// allocates gets an arena of its own (up to eight per core) and keeps what it frees: two arenas in all keep a
// backup smaller at the same speed. And what malloc maps is marked for transparent huge pages (where the kernel
// leaves them to madvise, as many distributions do), so a pack read faults in 2 MiB at a time rather than 4 KiB,
// which matters on a VM whose fresh pages are dear (glibc 2.35 and later; older ones ignore it). bench/README.md
// has the measurements of all three. malloc reads its tunables once, at start, so the command starts itself again
// with them set, keeping any the caller chose (the image sets them for every process; other C libraries ignore
// them).
const tunables = [
  ['glibc.malloc.mmap_threshold', '4194304'],
  ['glibc.malloc.arena_max', '2'],
  ['glibc.malloc.hugetlb', '1'],
];

/** The environment to run in: this one, or a copy with the tunables the caller did not choose added. */
function environment() {
  const chosen = process.env.GLIBC_TUNABLES || '';
  const missing = tunables.filter(([name]) => !chosen.includes(name));
  if (process.platform !== 'linux' || missing.length === 0) return process.env;
  const added = missing.map(([name, value]) => `${name}=${value}`);
  return Object.assign({}, process.env, { GLIBC_TUNABLES: (chosen ? [chosen] : []).concat(added).join(':') });
}

/** Runs the command again on `node`: in this process where Node can (22.15 and later), else as a child. */
function startAgain(node, env) {
  const args = process.execArgv.concat(process.argv.slice(1));
  if (typeof process.execve === 'function') process.execve(node, [node].concat(args), env);
  const child = childProcess().spawn(node, args, { env, stdio: 'inherit' });
  // Ctrl-C reaches the child from the terminal (one process group): passing it on would be a second SIGINT, and
  // a second one stops ferry before it releases its lock. SIGTERM and SIGHUP, which supervisors and `kill` send to
  // this process alone, are passed on.
  process.on('SIGINT', () => {});
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    process.stderr.write(`ferry: cannot start ${node}: ${err.message}\n`);
    process.exit(1);
  });
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}

const current = majorOf(process.versions.node) >= neededMajor;
const node = current ? process.execPath : pinnedNode();
if (node === undefined) {
  process.stderr.write(
    `ferry needs Node.js ${neededMajor} or later, but ${process.execPath} is ${process.versions.node} and no Node.js ` +
      `${neededMajor} was installed with ferry: run \`npm ci\` in ${checkout} (it installs the pinned Node), ` +
      `or start ferry as \`<node ${neededMajor}> ${entry}\`\n`,
  );
  process.exit(1);
}
const env = environment();
if (current && env === process.env) {
  nodeModule.enableCompileCache();
  import('./cli.ts');
} else {
  startAgain(node, env);
}
