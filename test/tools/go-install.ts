// Builds one pinned tool from its wrapper Go module into the shared cache, once.
// Several test processes may ask for the same tool at the same moment, so a lock folder makes one of them build
// while the others wait; the binary is moved into place with a rename, so nobody ever runs a half-written file.

import { spawn } from 'node:child_process';
import { access, constants, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ToolSpec } from './catalog.ts';

export interface InstallResult {
  path: string;
  /** false when the binary was already in the cache */
  built: boolean;
  seconds: number;
}

const lockPollMs = 1000;
const lockWaitMs = 30 * 60 * 1000;

export function cacheRoot(): string {
  return process.env.FERRY_CACHE || join(homedir(), '.cache', 'ferry');
}

export function wrapperDir(spec: ToolSpec): string {
  return fileURLToPath(new URL(spec.wrapper ?? spec.name, import.meta.url));
}

/** The pinned version, as the wrapper's go.mod requires it. */
export function toolVersion(spec: ToolSpec): string {
  const goMod = readFileSync(join(wrapperDir(spec), 'go.mod'), 'utf8');
  const line = goMod.split('\n').find((l) => l.trim().startsWith(`${spec.module} `));
  const version = line?.trim().split(/\s+/)[1];
  if (!version) throw new Error(`${join(wrapperDir(spec), 'go.mod')} does not require ${spec.module}.`);
  return version;
}

export function toolDir(spec: ToolSpec): string {
  return join(cacheRoot(), 'tools', `${spec.name}-${toolVersion(spec)}`);
}

export function toolBinary(spec: ToolSpec): string {
  return join(toolDir(spec), spec.binary);
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the build lock, or returns false if a live process holds it. A lock left by a dead process is taken over. */
async function tryLock(lockDir: string): Promise<boolean> {
  try {
    await mkdir(lockDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const owner = Number(await readFile(join(lockDir, 'pid'), 'utf8').catch(() => ''));
    // a lock without a pid file may be one being created right now: give it a poll before calling it stale
    if (!owner || processAlive(owner)) return false;
    await rm(lockDir, { recursive: true, force: true });
    return tryLock(lockDir);
  }
  await writeFile(join(lockDir, 'pid'), String(process.pid));
  return true;
}

function runGo(args: string[], env: NodeJS.ProcessEnv, showOutput: boolean): Promise<void> {
  const go = process.env.GO || 'go';
  return new Promise((resolve, reject) => {
    const child = spawn(go, args, {
      env,
      stdio: ['ignore', showOutput ? 'inherit' : 'pipe', showOutput ? 'inherit' : 'pipe'],
    });
    let output = '';
    child.stdout?.on('data', (b: Buffer) => {
      output = (output + b.toString()).slice(-4000);
    });
    child.stderr?.on('data', (b: Buffer) => {
      output = (output + b.toString()).slice(-4000);
    });
    child.on('error', (err) =>
      reject(new Error(`Cannot run the Go toolchain "${go}" (install Go or set GO): ${err.message}`)),
    );
    child.on('exit', (code) => {
      if (code === 0) resolve();
      else reject(new Error(`go ${args.join(' ')} failed with exit code ${code}:\n${output}`));
    });
  });
}

async function build(spec: ToolSpec, showOutput: boolean): Promise<void> {
  const dir = toolDir(spec);
  const staging = `${dir}.staging-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  // static binaries (no cgo) so the cache survives libc changes; -s -w keeps the link step short
  const env = { ...process.env, CGO_ENABLED: '0' };
  const output = join(staging, spec.binary);
  try {
    await runGo(
      [
        'build',
        '-C',
        wrapperDir(spec),
        '-trimpath',
        `-ldflags=${['-s -w', ...(spec.ldflags?.(toolVersion(spec)) ?? [])].join(' ')}`,
        '-o',
        output,
        spec.pkg,
      ],
      env,
      showOutput,
    );
    await mkdir(dir, { recursive: true });
    await rename(join(staging, spec.binary), toolBinary(spec));
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/** Returns the cached binary, building it first if needed. `showOutput` streams Go's output (for the CLI). */
export async function installTool(spec: ToolSpec, showOutput = false): Promise<InstallResult> {
  const started = performance.now();
  const path = toolBinary(spec);
  const seconds = (): number => (performance.now() - started) / 1000;
  if (await isExecutable(path)) return { path, built: false, seconds: seconds() };
  await mkdir(join(cacheRoot(), 'tools'), { recursive: true });
  const lockDir = `${toolDir(spec)}.lock`;
  while (!(await tryLock(lockDir))) {
    if (performance.now() - started > lockWaitMs) {
      throw new Error(`Timed out waiting for another process to build ${spec.name} (lock ${lockDir}).`);
    }
    await new Promise((r) => setTimeout(r, lockPollMs));
    if (await isExecutable(path)) return { path, built: false, seconds: seconds() };
  }
  try {
    if (await isExecutable(path)) return { path, built: false, seconds: seconds() };
    await build(spec, showOutput);
    return { path, built: true, seconds: seconds() };
  } finally {
    await rm(lockDir, { recursive: true, force: true });
  }
}
