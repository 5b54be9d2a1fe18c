// Puts a node's metadata back on a restored entry, in an order that keeps each step's effect: ownership
// first (chown clears setuid / setgid and file capabilities), then extended attributes, then the mode,
// then the times. Directories must get theirs after their children are written, or writing the
// children moves the directory's mtime again; that ordering is the restorer's job.
//
// Times go through fs.utimes / fs.lutimes, which take seconds as a double: a present-day time keeps
// about 240 ns of precision (a double's resolution near 1.7e9 s is 2^-22 s), not restic's exact ns.
// Node has no call that sets nanoseconds exactly.
import { chmod, lchown, lutimes, utimes } from 'node:fs/promises';
import type { GoTime } from '../tree/gotime.ts';
import { posixPermissionsFromGoMode } from '../tree/mode.ts';
import type { TreeNode } from '../tree/node.ts';
import type { XattrWriter } from './xattr.ts';

export interface RestoreOptions {
  /** extended attributes are restored only with a writer */
  xattrs?: XattrWriter;
}

/**
 * The instant in the seconds fs.utimes takes: the closest double, written as a string because Node
 * silently replaces a negative number (a time before 1970) with the current time, but not a string.
 */
export function utimesSeconds(t: GoTime): string {
  const sec = t.ns / 1_000_000_000n - (t.ns < 0n && t.ns % 1_000_000_000n !== 0n ? 1n : 0n);
  return String(Number(sec) + Number(t.ns - sec * 1_000_000_000n) / 1e9);
}

function isRoot(): boolean {
  return process.geteuid?.() === 0;
}

/** Applies ownership, extended attributes, mode and times; every step is tried, the first failure thrown. */
export async function restoreMetadata(path: Buffer, node: TreeNode, opts: RestoreOptions = {}): Promise<void> {
  const failures: string[] = [];
  const attempt = async (what: string, step: () => Promise<void>): Promise<void> => {
    try {
      await step();
    } catch (err) {
      failures.push(`${what}: ${(err as Error).message}`);
    }
  };
  await attempt('ownership', async () => {
    try {
      await lchown(path, node.uid, node.gid);
    } catch (err) {
      // Like cp -a and restic: without root, files simply belong to the restoring user.
      if (isRoot() || (err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
    }
  });
  if (opts.xattrs && node.extendedAttributes.length > 0) {
    const writer = opts.xattrs;
    await attempt('extended attributes', () => writer.write(path, node.extendedAttributes));
  }
  // A symlink's own mode cannot be changed on Linux and is always 0777.
  if (node.type !== 'symlink') await attempt('mode', () => chmod(path, posixPermissionsFromGoMode(node.mode)));
  const setTimes = node.type === 'symlink' ? lutimes : utimes;
  await attempt('times', () => setTimes(path, utimesSeconds(node.atime), utimesSeconds(node.mtime)));
  if (failures.length > 0) throw new Error(`could not restore the metadata of ${path.toString('utf8')}: ${failures.join('; ')}`);
}
