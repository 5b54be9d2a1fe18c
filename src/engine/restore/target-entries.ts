// Where a restore writes: every entry is reached from the target folder's descriptor by a path relative to it,
// resolved by the kernel without following any symlink and without leaving the target (openBeneath), and made by
// name inside its open parent folder. Whatever the repository holds and whatever the target volume already holds,
// nothing is opened, made, linked or removed outside the target.
//
// An existing entry where one is restored is replaced in place, as restic does, never followed: a symlink, file,
// fifo or device where a folder goes is removed and the folder made; an existing folder is reused. A folder where a
// non-folder goes is refused, naming the entry (ferry does not delete a tree the snapshot does not describe).
// These functions are plain system calls on numbers, so the small-file thread uses them too.
import { constants, fstatSync, lstatSync } from 'node:fs';
import { closeDescriptor, dirPathFlags, O_PATH, openBeneath } from '../sys/beneath.ts';
import { linkDescriptor, makeDir, makeNode, makeSymlink, procPath, removeEntry } from '../sys/entries.ts';

export class UnsafeTargetError extends Error {}

const createFlags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** `rel`'s parent (empty: the target itself) and last component. */
export function splitPath(rel: Uint8Array): { parent: Uint8Array; name: Uint8Array } {
  const slash = rel.lastIndexOf(0x2f);
  return slash < 0
    ? { parent: rel.subarray(0, 0), name: rel }
    : { parent: rel.subarray(0, slash), name: rel.subarray(slash + 1) };
}

export function childPath(dir: Uint8Array, name: Uint8Array): Buffer {
  return dir.length === 0 ? Buffer.from(name) : Buffer.concat([dir, slash, name]);
}

const slash = Buffer.from('/');

function shown(rel: Uint8Array): string {
  return Buffer.from(rel).toString('utf8');
}

/** The errors of a path that meets a symlink (or a non-folder) on its way, in words that name the entry. */
function explained(err: unknown, rel: Uint8Array): unknown {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ELOOP' || code === 'ENOTDIR' || code === 'EXDEV') {
    return new UnsafeTargetError(
      `refusing to restore ${shown(rel)}: a symlink or non-folder stands in its path inside the target, and a restore never follows one (${code})`,
    );
  }
  return err;
}

/** Runs `use` with `rel`'s parent folder open; the descriptor is closed after. */
export function inParent<T>(root: number, rel: Uint8Array, use: (dirfd: number, name: Uint8Array) => T): T {
  const { parent, name } = splitPath(rel);
  let dirfd: number;
  try {
    dirfd = openBeneath(root, parent, dirPathFlags);
  } catch (err) {
    throw explained(err, rel);
  }
  try {
    return use(dirfd, name);
  } finally {
    closeDescriptor(dirfd);
  }
}

/** Whether `name` in `dirfd` is a folder (not following a symlink); undefined when there is no such entry. */
function isFolder(dirfd: number, name: Uint8Array): boolean | undefined {
  try {
    return lstatSync(procPath(dirfd, name)).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Calls `make` (an *at call making `name`); an existing non-folder in the way is removed first. A folder in the way
 * is refused, or kept when a folder is what `make` makes (`what` undefined).
 */
function replacing(dirfd: number, name: Uint8Array, rel: Uint8Array, what: string | undefined, make: () => void): void {
  try {
    make();
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  if (isFolder(dirfd, name)) {
    if (what === undefined) return;
    throw new UnsafeTargetError(
      `refusing to restore ${what} ${shown(rel)}: a folder of that name is already in the target`,
    );
  }
  removeEntry(dirfd, name);
  make();
}

/** Makes the folder `rel` (mode 0700 until its metadata is restored); an existing folder is kept. */
export function makeFolder(root: number, rel: Uint8Array): void {
  inParent(root, rel, (dirfd, name) => replacing(dirfd, name, rel, undefined, () => makeDir(dirfd, name, 0o700)));
}

/** Creates the file `rel` afresh (mode 0600) and returns its descriptor, open for writing. */
export function createFile(root: number, rel: Uint8Array): number {
  try {
    return openBeneath(root, rel, createFlags, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw explained(err, rel);
  }
  // something is in the way: a file of an earlier restore, or anything the volume held; it is replaced, not opened
  return inParent(root, rel, (dirfd, name) => {
    let fd = -1;
    replacing(dirfd, name, rel, 'the file', () => {
      fd = openBeneath(dirfd, name, createFlags, 0o600);
    });
    return fd;
  });
}

/** Removes the file `rel` (a restore that failed must not leave it looking complete). */
export function removeFile(root: number, rel: Uint8Array): void {
  inParent(root, rel, (dirfd, name) => removeEntry(dirfd, name));
}

export function makeSymlinkEntry(root: number, rel: Uint8Array, target: Uint8Array): void {
  inParent(root, rel, (dirfd, name) =>
    replacing(dirfd, name, rel, 'the symlink', () => makeSymlink(target, dirfd, name)),
  );
}

/** A fifo or device node; `mode` carries the type bits (see sys/entries.ts). */
export function makeNodeEntry(root: number, rel: Uint8Array, mode: number, device: bigint): void {
  inParent(root, rel, (dirfd, name) =>
    replacing(dirfd, name, rel, 'the special file', () => makeNode(dirfd, name, mode, device)),
  );
}

/** Makes `rel` a hard link to the file `from`, itself restored under the target. */
export function makeHardLink(root: number, from: Uint8Array, rel: Uint8Array): void {
  let src: number;
  try {
    src = openBeneath(root, from, O_PATH | constants.O_NOFOLLOW);
  } catch (err) {
    throw explained(err, from);
  }
  try {
    if (!fstatSync(src).isFile())
      throw new UnsafeTargetError(`refusing to link ${shown(rel)} to ${shown(from)}: that is no longer a regular file`);
    inParent(root, rel, (dirfd, name) =>
      replacing(dirfd, name, rel, 'the hard link', () => linkDescriptor(src, dirfd, name)),
    );
  } finally {
    closeDescriptor(src);
  }
}

/** Opens the folder `rel` itself (never a symlink in its place), for its metadata. */
export function openFolder(root: number, rel: Uint8Array): number {
  try {
    return openBeneath(root, rel, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    throw explained(err, rel);
  }
}
