// Puts a node's metadata back on a restored entry, named inside its open parent folder and never through a symlink
// (the *at calls with AT_SYMLINK_NOFOLLOW), in an order that keeps each step's effect: ownership first (chown clears
// setuid / setgid and file capabilities), then extended attributes, then the mode, then the times, to the
// nanosecond. Directories must get theirs after their children are written, or writing the children moves the
// directory's mtime again; that ordering is the restorer's job.
import { basename, dirname } from 'node:path';
import { closeDescriptor, dirPathFlags, O_CLOEXEC } from '../sys/beneath.ts';
import { setModeAt, setOwnerAt, setTimesAt, timespecs } from '../sys/attributes.ts';
import { procPath } from '../sys/entries.ts';
import { check, cPath, libc } from '../sys/libc.ts';
import { setXattrOf } from '../sys/xattrs.ts';
import { posixPermissionsFromGoMode } from '../tree/mode.ts';
import type { TreeNode } from '../tree/node.ts';

export interface RestoreOptions {
  /** restore the node's extended attributes too */
  xattrs?: boolean;
}

function isRoot(): boolean {
  return process.geteuid?.() === 0;
}

/** The node's atime and mtime as the two timespecs utimensat and futimens take. */
export function nodeTimes(node: TreeNode): Buffer {
  return timespecs(node.atime.ns, node.mtime.ns);
}

/**
 * Applies ownership, extended attributes, mode and times to `name` in the folder `dirfd`; every step is tried, and
 * one error names the entry (`shown`) and each step that failed.
 */
export function restoreMetadataAt(
  dirfd: number,
  name: Uint8Array,
  node: TreeNode,
  shown: string,
  opts: RestoreOptions = {},
): void {
  const failures: string[] = [];
  const attempt = (what: string, step: () => void): void => {
    try {
      step();
    } catch (err) {
      failures.push(`${what}: ${(err as Error).message}`);
    }
  };
  attempt('ownership', () => {
    try {
      setOwnerAt(dirfd, name, node.uid, node.gid);
    } catch (err) {
      // Like cp -a and restic: without root, files simply belong to the restoring user.
      if (isRoot() || (err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
    }
  });
  if (opts.xattrs && node.extendedAttributes.length > 0) {
    // the parent folder's /proc entry reaches the entry by name; lsetxattr does not follow it if it is a symlink
    const path = procPath(dirfd, name);
    attempt('extended attributes', () => {
      for (const a of node.extendedAttributes) setXattrOf(path, a.name, a.value ?? new Uint8Array(0));
    });
  }
  // A symlink's own mode cannot be changed on Linux and is always 0777.
  if (node.type !== 'symlink') attempt('mode', () => setModeAt(dirfd, name, posixPermissionsFromGoMode(node.mode)));
  attempt('times', () => setTimesAt(dirfd, name, nodeTimes(node)));
  if (failures.length > 0) throw new Error(`could not restore the metadata of ${shown}: ${failures.join('; ')}`);
}

/** restoreMetadataAt for a path the caller chose (the folder a volume is mounted on), whose last component is named. */
export function restoreMetadata(path: string, node: TreeNode, opts: RestoreOptions = {}): void {
  const dirfd = check(libc().openat(-100, cPath(dirname(path)), dirPathFlags | O_CLOEXEC, 0), 'open', dirname(path));
  try {
    restoreMetadataAt(dirfd, Buffer.from(basename(path)), node, path, opts);
  } finally {
    closeDescriptor(dirfd);
  }
}
