// Owner, mode and times of an entry, exact and without following symlinks: through an open descriptor
// (futimens) or by name inside an open folder with AT_SYMLINK_NOFOLLOW (fchownat, fchmodat, utimensat). Times are
// whole nanoseconds, as restic records and restores them; Node's utimes takes a double and loses up to ~240 ns.
import { check, cPath, libc } from './libc.ts';

const AT_SYMLINK_NOFOLLOW = 0x100;
const nsPerSecond = 1_000_000_000n;

/** The two struct timespec (atime, mtime) utimensat and futimens take, from nanoseconds since 1970. */
export function timespecs(atimeNs: bigint, mtimeNs: bigint): Buffer {
  const b = Buffer.alloc(32);
  writeTimespec(b, 0, atimeNs);
  writeTimespec(b, 16, mtimeNs);
  return b;
}

function writeTimespec(b: Buffer, at: number, ns: bigint): void {
  // tv_nsec must be in [0, 1e9): times before 1970 take the second below
  let sec = ns / nsPerSecond;
  let rest = ns - sec * nsPerSecond;
  if (rest < 0n) {
    sec -= 1n;
    rest += nsPerSecond;
  }
  b.writeBigInt64LE(sec, at);
  b.writeBigInt64LE(rest, at + 8);
}

export function setTimes(fd: number, times: Uint8Array): void {
  check(libc().futimens(fd, times), 'futimens');
}

export function setTimesAt(dirfd: number, name: Uint8Array, times: Uint8Array): void {
  check(libc().utimensat(dirfd, cPath(name), times, AT_SYMLINK_NOFOLLOW), 'utimensat', name);
}

export function setOwnerAt(dirfd: number, name: Uint8Array, uid: number, gid: number): void {
  check(libc().fchownat(dirfd, cPath(name), uid, gid, AT_SYMLINK_NOFOLLOW), 'fchownat', name);
}

/** Not for symlinks, whose mode Linux does not let anyone change. */
export function setModeAt(dirfd: number, name: Uint8Array, mode: number): void {
  check(libc().fchmodat(dirfd, cPath(name), mode, AT_SYMLINK_NOFOLLOW), 'fchmodat', name);
}
