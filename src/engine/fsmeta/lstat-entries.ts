// lstat of a folder's entries from inside the folder: the kernel then looks up one name per call, not every
// component of the full path again. On the deep trees of a volume that is a third less time per entry, and lstat is
// the largest part of an incremental backup's main thread. The working directory belongs to the whole process, so it
// moves only for one synchronous call and is back before anything else runs on this thread; ferry's own paths are all
// absolute, so its other threads (which read files meanwhile) do not see the move.
import { lstatSync, type BigIntStats } from 'node:fs';

/**
 * Where the process was, read once: after a chdir, process.cwd() asks the kernel again (on a deep path as much as
 * the lstat saved per folder), and nothing else in ferry moves it.
 */
let home: string | undefined;

/**
 * The entries' lstat, in order; undefined where it failed, and for every entry of a folder that cannot be entered:
 * the caller stats those by their full paths, which also gives errors that name them.
 */
export function lstatEntries(dir: Buffer, names: readonly Uint8Array[]): (BigIntStats | undefined)[] {
  const back = enter(dir);
  if (back === undefined) return names.map(() => undefined);
  try {
    return names.map(tryLstat);
  } finally {
    leave(back);
  }
}

/** Moves into `dir`; returns where to go back to, or undefined when it cannot. */
function enter(dir: Buffer): string | undefined {
  const path = dir.toString();
  // chdir takes a string only, and a folder whose name is not UTF-8 has no string that names it
  if (!Buffer.from(path).equals(dir)) return undefined;
  try {
    home ??= process.cwd();
    process.chdir(path);
    return home;
  } catch {
    // a folder we may not enter, or a worker thread (which may not chdir)
    return undefined;
  }
}

function leave(back: string): void {
  try {
    process.chdir(back);
  } catch {
    // the directory the command started in was removed meanwhile: nothing of ferry's needs it
  }
}

function tryLstat(name: Uint8Array): BigIntStats | undefined {
  try {
    // Node takes any Uint8Array as a path, as it does a Buffer; its types name only Buffer
    return lstatSync(name as Buffer, { bigint: true });
  } catch {
    return undefined;
  }
}
