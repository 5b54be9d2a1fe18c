// The C library's system calls that Node has no API for (openat2, the *at family, utimensat with nanoseconds,
// mknodat, the xattr calls, fallocate, fstatfs), reached through koffi, whose npm package ships its binaries. Loaded once per
// thread on first use: a restore's small-file thread loads its own. Where koffi or libc cannot be loaded the call
// throws, naming why; nothing falls back to a less exact or less safe path.
//
// Paths are passed as NUL-terminated byte buffers (cPath), so names that are not UTF-8 reach the kernel as they
// are. Failures become errors like Node's own (code, errno, syscall, path), so callers test `code` as they do for fs.
import { createRequire } from 'node:module';
import { constants } from 'node:os';

/** The calls, as koffi binds them: every one returns -1 and sets errno on failure. */
export interface Libc {
  syscall4(nr: number, a: number, b: Uint8Array, c: Uint8Array, d: number): number;
  openat(dirfd: number, path: Uint8Array, flags: number, mode: number): number;
  close(fd: number): number;
  mkdirat(dirfd: number, path: Uint8Array, mode: number): number;
  symlinkat(target: Uint8Array, dirfd: number, path: Uint8Array): number;
  linkat(olddirfd: number, oldpath: Uint8Array, newdirfd: number, newpath: Uint8Array, flags: number): number;
  mknodat(dirfd: number, path: Uint8Array, mode: number, dev: bigint): number;
  unlinkat(dirfd: number, path: Uint8Array, flags: number): number;
  fchownat(dirfd: number, path: Uint8Array, uid: number, gid: number, flags: number): number;
  fchmodat(dirfd: number, path: Uint8Array, mode: number, flags: number): number;
  utimensat(dirfd: number, path: Uint8Array | null, times: Uint8Array, flags: number): number;
  futimens(fd: number, times: Uint8Array): number;
  fsetxattr(fd: number, name: Uint8Array, value: Uint8Array, size: number, flags: number): number;
  lsetxattr(path: Uint8Array, name: Uint8Array, value: Uint8Array, size: number, flags: number): number;
  llistxattr(path: Uint8Array, list: Uint8Array | null, size: number): number;
  lgetxattr(path: Uint8Array, name: Uint8Array, value: Uint8Array | null, size: number): number;
  fallocate(fd: number, mode: number, offset: bigint, len: bigint): number;
  fstatfs(fd: number, buf: Uint8Array): number;
  errno(): number;
}

const prototypes: Record<Exclude<keyof Libc, 'errno'>, string> = {
  // glibc has no openat2 wrapper; syscall() takes its arguments in registers, so a fixed prototype suits it
  syscall4: 'long syscall(long nr, int a, const uint8_t *b, const uint8_t *c, size_t d)',
  openat: 'int openat(int dirfd, const uint8_t *path, int flags, uint32_t mode)',
  close: 'int close(int fd)',
  mkdirat: 'int mkdirat(int dirfd, const uint8_t *path, uint32_t mode)',
  symlinkat: 'int symlinkat(const uint8_t *target, int dirfd, const uint8_t *path)',
  linkat: 'int linkat(int olddirfd, const uint8_t *oldpath, int newdirfd, const uint8_t *newpath, int flags)',
  mknodat: 'int mknodat(int dirfd, const uint8_t *path, uint32_t mode, uint64_t dev)',
  unlinkat: 'int unlinkat(int dirfd, const uint8_t *path, int flags)',
  fchownat: 'int fchownat(int dirfd, const uint8_t *path, uint32_t uid, uint32_t gid, int flags)',
  fchmodat: 'int fchmodat(int dirfd, const uint8_t *path, uint32_t mode, int flags)',
  utimensat: 'int utimensat(int dirfd, const uint8_t *path, const uint8_t *times, int flags)',
  futimens: 'int futimens(int fd, const uint8_t *times)',
  fsetxattr: 'int fsetxattr(int fd, const uint8_t *name, const uint8_t *value, size_t size, int flags)',
  lsetxattr: 'int lsetxattr(const uint8_t *path, const uint8_t *name, const uint8_t *value, size_t size, int flags)',
  llistxattr: 'long llistxattr(const uint8_t *path, uint8_t *list, size_t size)',
  lgetxattr: 'long lgetxattr(const uint8_t *path, const uint8_t *name, uint8_t *value, size_t size)',
  fallocate: 'int fallocate(int fd, int mode, int64_t offset, int64_t len)',
  fstatfs: 'int fstatfs(int fd, uint8_t *buf)',
};

export class LibcUnavailableError extends Error {}

let bound: Libc | undefined;

/** The calls, bound on first use in this thread; throws LibcUnavailableError when they cannot be. */
export function libc(): Libc {
  bound ??= bind();
  return bound;
}

function bind(): Libc {
  if (process.platform !== 'linux')
    throw new LibcUnavailableError(
      `ferry restores and reads file metadata through Linux system calls; this is ${process.platform}`,
    );
  try {
    // koffi is CommonJS with a native addon: require keeps its load synchronous, in worker threads too
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    const lib = koffi.load('libc.so.6');
    const calls = Object.fromEntries(
      Object.entries(prototypes).map(([name, proto]) => [name, lib.func(proto)]),
    ) as unknown as Libc;
    calls.errno = () => koffi.errno();
    return calls;
  } catch (err) {
    throw new LibcUnavailableError(
      `cannot reach the C library's system calls through koffi (npm package "koffi"), which ferry needs to restore files safely and exactly: ${(err as Error).message}`,
    );
  }
}

/** `path` as the NUL-terminated bytes C expects. */
export function cPath(path: Uint8Array | string): Buffer {
  const bytes = typeof path === 'string' ? Buffer.from(path) : path;
  const out = Buffer.allocUnsafe(bytes.length + 1);
  out.set(bytes, 0);
  out[bytes.length] = 0;
  return out;
}

const errnoNames = new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]));

/** An error like those of node:fs for the errno of a failed call. */
export function errnoError(syscall: string, errno: number, path?: Uint8Array | string): NodeJS.ErrnoException {
  const code = errnoNames.get(errno) ?? `E${errno}`;
  const shown = path === undefined ? '' : ` '${typeof path === 'string' ? path : Buffer.from(path).toString('utf8')}'`;
  const err: NodeJS.ErrnoException = new Error(`${code}: ${syscall}${shown} failed (errno ${errno})`);
  err.code = code;
  err.errno = -errno;
  err.syscall = syscall;
  if (path !== undefined) err.path = typeof path === 'string' ? path : Buffer.from(path).toString('utf8');
  return err;
}

/** Returns `result`, or throws the call's errno as an error when it is negative. */
export function check(result: number, syscall: string, path?: Uint8Array | string): number {
  if (result < 0) throw errnoError(syscall, libc().errno(), path);
  return result;
}
