// The reference chunker for tests: test/tools/chunkref, a small Go program over the real github.com/restic/chunker.
// Built once into the shared tool cache; the folder name carries the library version and a hash of the sources,
// so editing main.go or bumping the pin builds a fresh binary instead of reusing a stale one.

import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, constants, mkdir, readFile, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Polynomial } from '../../src/engine/chunker/polynomial.ts';
import { cacheRoot } from '../tools/go-install.ts';

const run = promisify(execFile);
const sourceDir = join(import.meta.dirname, '..', 'tools', 'chunkref');
const sourceFiles = ['go.mod', 'go.sum', 'main.go'];

export interface RefChunk {
  offset: number;
  length: number;
  sha256: string;
}

async function version(): Promise<string> {
  const hash = createHash('sha256');
  for (const name of sourceFiles) hash.update(await readFile(join(sourceDir, name)));
  const goMod = await readFile(join(sourceDir, 'go.mod'), 'utf8');
  const pinned = /github\.com\/restic\/chunker (v\S+)/.exec(goMod)?.[1];
  if (!pinned) throw new Error(`${join(sourceDir, 'go.mod')} does not pin github.com/restic/chunker.`);
  return `${pinned}-${hash.digest('hex').slice(0, 12)}`;
}

let built: Promise<string> | undefined;

async function build(): Promise<string> {
  const binary = join(cacheRoot(), 'tools', `chunkref-${await version()}`, 'chunkref');
  try {
    await access(binary, constants.X_OK);
    return binary;
  } catch {
    // not built yet
  }
  // each builder writes its own file and renames it into place, so concurrent test processes never see half a binary
  const staging = `${binary}.staging-${process.pid}`;
  await mkdir(join(binary, '..'), { recursive: true });
  try {
    await run(process.env.GO || 'go', ['build', '-trimpath', '-o', staging, '.'], {
      cwd: sourceDir,
      env: { ...process.env, CGO_ENABLED: '0' },
    });
    await rename(staging, binary);
  } finally {
    await rm(staging, { force: true });
  }
  return binary;
}

/** Path of the chunkref binary, built on first use (needs the Go toolchain). */
export function chunkrefPath(): Promise<string> {
  built ??= build();
  return built;
}

async function chunkref(args: string[]): Promise<string[]> {
  const { stdout } = await run(await chunkrefPath(), args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout.split('\n').filter((line) => line !== '');
}

/** The chunks restic's chunker cuts `file` into with polynomial `pol`. */
export async function refChunks(pol: Polynomial, file: string): Promise<RefChunk[]> {
  const lines = await chunkref(['chunk', pol.toString(16), file]);
  return lines.map((line) => {
    const [offset, length, sha256] = line.split(' ');
    return { offset: Number(offset), length: Number(length), sha256 };
  });
}

/** restic's own irreducibility verdict for each polynomial. */
export async function refIrreducible(pols: Polynomial[]): Promise<boolean[]> {
  const lines = await chunkref(['irreducible', ...pols.map((p) => p.toString(16))]);
  return lines.map((line) => line === 'true');
}

/** The polynomial restic's DerivePolynomial picks when it reads these random bytes. */
export async function refDerivePolynomial(random: Uint8Array): Promise<Polynomial> {
  const [line] = await chunkref(['derive', Buffer.from(random).toString('hex')]);
  return BigInt(`0x${line}`);
}
