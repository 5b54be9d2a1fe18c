// Making and removing directory entries by name inside an open folder (the *at calls), so that no component of a
// path is looked up again, and a symlink placed where the entry goes is never followed: mkdirat, symlinkat and
// mknodat fail with EEXIST on any existing name, symlinks included. Hard links are made from an open descriptor of
// the file (through its /proc/self/fd entry), not from a path that could be resolved again.
import { check, cPath, libc } from './libc.ts';

const AT_FDCWD = -100;
const AT_SYMLINK_FOLLOW = 0x400;
const AT_REMOVEDIR = 0x200;
export const S_IFIFO = 0o010000;
export const S_IFCHR = 0o020000;
export const S_IFBLK = 0o060000;

/** Where a descriptor's file can be reached by path, for the calls that take only paths. */
export function procPath(fd: number, name?: Uint8Array): Buffer {
  const dir = Buffer.from(`/proc/self/fd/${fd}`);
  return name === undefined ? dir : Buffer.concat([dir, Buffer.from('/'), name]);
}

export function makeDir(dirfd: number, name: Uint8Array, mode: number): void {
  check(libc().mkdirat(dirfd, cPath(name), mode), 'mkdirat', name);
}

export function makeSymlink(target: Uint8Array, dirfd: number, name: Uint8Array): void {
  check(libc().symlinkat(cPath(target), dirfd, cPath(name)), 'symlinkat', name);
}

/** A fifo or device node: `mode` carries the type (S_IFIFO, S_IFCHR, S_IFBLK) and the permissions. */
export function makeNode(dirfd: number, name: Uint8Array, mode: number, device: bigint): void {
  check(libc().mknodat(dirfd, cPath(name), mode, device), 'mknodat', name);
}

/** A new name `name` in `dirfd` for the file open as `fd` (an O_PATH descriptor will do). */
export function linkDescriptor(fd: number, dirfd: number, name: Uint8Array): void {
  check(libc().linkat(AT_FDCWD, cPath(procPath(fd)), dirfd, cPath(name), AT_SYMLINK_FOLLOW), 'linkat', name);
}

/** Removes the entry `name` itself (a symlink, not what it points to); `dir`: an empty folder. */
export function removeEntry(dirfd: number, name: Uint8Array, dir = false): void {
  check(libc().unlinkat(dirfd, cPath(name), dir ? AT_REMOVEDIR : 0), 'unlinkat', name);
}
