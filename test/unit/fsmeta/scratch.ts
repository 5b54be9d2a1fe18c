// A scratch folder per test, removed afterwards.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export async function withScratch<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-fsmeta-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A path under `dir` whose last component is raw bytes. */
export function rawPath(dir: string, name: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(dir + '/'), name]);
}

export const isRoot = process.geteuid?.() === 0;
