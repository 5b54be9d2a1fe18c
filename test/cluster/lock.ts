// A lock folder with the owner's pid: several test processes may want to build or start the box at the same moment.
// A lock whose owner died is taken over.

import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

const pollMs = 500;

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function tryLock(dir: string): Promise<boolean> {
  try {
    await mkdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const owner = Number(await readFile(join(dir, 'pid'), 'utf8').catch(() => ''));
    if (!owner || processAlive(owner)) return false;
    await rm(dir, { recursive: true, force: true });
    return tryLock(dir);
  }
  await writeFile(join(dir, 'pid'), String(process.pid));
  return true;
}

/** Runs fn while holding the lock folder `dir`, waiting up to timeoutMs for another holder. */
export async function withLock<T>(dir: string, timeoutMs: number, fn: () => Promise<T>): Promise<T> {
  await mkdir(dirname(dir), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  while (!(await tryLock(dir))) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for the lock ${dir} held by another process.`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
  try {
    return await fn();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
