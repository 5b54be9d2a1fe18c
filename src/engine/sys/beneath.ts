// Opening a path below a directory descriptor without following any symlink on the way (the last component
// included) and without leaving that directory: openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, one call. Where
// a seccomp profile refuses openat2 (ENOSYS, or EPERM from some profiles), the same guarantee comes from walking the
// path one component at a time with openat(O_NOFOLLOW | O_DIRECTORY). A symlink met on the way fails with ELOOP
// (openat2) or ENOTDIR / ELOOP (the walk): both are reported as the symlink they are.
import { constants } from 'node:fs';
import { check, cPath, errnoError, libc } from './libc.ts';

/** Linux's values, the same on x86-64 and arm64 (the O_ flags that differ come from node:fs). */
export const O_PATH = 0o10000000;
export const O_CLOEXEC = 0o2000000;
const RESOLVE_NO_SYMLINKS = 0x04;
const RESOLVE_BENEATH = 0x08;
const SYS_openat2 = 437;
const ENOSYS = 38;
const EPERM = 1;

/** The open flags for a folder that is only a place to resolve names in, never read. */
export const dirPathFlags = O_PATH | constants.O_DIRECTORY;

/** false once openat2 turned out to be refused in this thread */
let openat2Works = true;

/** struct open_how for each (flags, mode) used: a restore opens a million files with the same two */
const hows = new Map<number, Buffer>();

function openHow(flags: number, mode: number): Buffer {
  const key = flags * 0o10000 + mode;
  let how = hows.get(key);
  if (how === undefined) {
    how = Buffer.alloc(24);
    how.writeBigUInt64LE(BigInt(flags | O_CLOEXEC), 0);
    how.writeBigUInt64LE(BigInt(mode), 8);
    how.writeBigUInt64LE(BigInt(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), 16);
    hows.set(key, how);
  }
  return how;
}

/**
 * Opens `path` (relative, its components plain names; empty for `dirfd` itself) below `dirfd` with open(2)'s
 * `flags` and `mode`, following no symlink. Returns the new descriptor.
 */
export function openBeneath(dirfd: number, path: Uint8Array, flags: number, mode = 0): number {
  const c = libc();
  const p = cPath(path.length === 0 ? '.' : path);
  if (openat2Works) {
    const fd = c.syscall4(SYS_openat2, dirfd, p, openHow(flags, mode), 24);
    if (fd >= 0) return fd;
    const errno = c.errno();
    if (errno !== ENOSYS && errno !== EPERM) throw errnoError('openat2', errno, path);
    if (errno === ENOSYS) openat2Works = false;
  }
  return walk(dirfd, path, flags, mode);
}

/** openat2's guarantee from one openat per component, each refusing a symlink. */
function walk(dirfd: number, path: Uint8Array, flags: number, mode: number): number {
  const c = libc();
  const parts = Buffer.from(path)
    .toString('latin1')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
  if (parts.includes('..')) throw errnoError('openat', 18 /* EXDEV, as openat2 answers */, path);
  if (parts.length === 0) return check(c.openat(dirfd, cPath('.'), flags | O_CLOEXEC, mode), 'openat', path);
  let at = dirfd;
  try {
    for (let i = 0; i < parts.length - 1; i++) {
      const next = check(
        c.openat(at, cPath(Buffer.from(parts[i], 'latin1')), dirPathFlags | constants.O_NOFOLLOW | O_CLOEXEC, 0),
        'openat',
        path,
      );
      if (at !== dirfd) closeDescriptor(at);
      at = next;
    }
    return check(
      c.openat(
        at,
        cPath(Buffer.from(parts[parts.length - 1], 'latin1')),
        flags | constants.O_NOFOLLOW | O_CLOEXEC,
        mode,
      ),
      'openat',
      path,
    );
  } finally {
    if (at !== dirfd) closeDescriptor(at);
  }
}

/**
 * Closes a descriptor from openBeneath. Not through fs.closeSync: in a worker thread Node warns about closing a
 * descriptor its fs did not open there.
 */
export function closeDescriptor(fd: number): void {
  check(libc().close(fd), 'close');
}

/** For tests: makes this thread use the component walk, as it does where openat2 is refused. */
export function useComponentWalk(walkOnly: boolean): void {
  openat2Works = !walkOnly;
}
