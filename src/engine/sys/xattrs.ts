// Extended attributes through the system calls: set on an open descriptor (fsetxattr) or on an entry named by path
// without following it (lsetxattr), listed and read without following (llistxattr, lgetxattr). Attributes are
// listed in the file system's order, as restic records them.
import { check, cPath, errnoError, libc } from './libc.ts';

const ERANGE = 34;

export function setXattr(fd: number, name: string, value: Uint8Array): void {
  check(libc().fsetxattr(fd, cPath(name), value, value.length, 0), 'fsetxattr', name);
}

export function setXattrOf(path: Uint8Array, name: string, value: Uint8Array): void {
  check(libc().lsetxattr(cPath(path), cPath(name), value, value.length, 0), 'lsetxattr', path);
}

/**
 * Calls `fill` with a buffer that grows until the answer fits: the size asked first can be outgrown by an
 * attribute set meanwhile (ERANGE), then it is asked again.
 */
function sized(what: string, path: Uint8Array, fill: (buf: Uint8Array | null, size: number) => number): Buffer {
  for (;;) {
    const size = check(fill(null, 0), what, path);
    if (size === 0) return Buffer.alloc(0);
    const buf = Buffer.alloc(size);
    const n = fill(buf, size);
    if (n >= 0) return buf.subarray(0, n);
    const errno = libc().errno();
    if (errno !== ERANGE) throw errnoError(what, errno, path);
  }
}

/** The names of the attributes of `path` itself (a symlink is not followed). */
export function listXattrs(path: Uint8Array): string[] {
  const c = libc();
  const p = cPath(path);
  const list = sized('llistxattr', path, (buf, size) => c.llistxattr(p, buf, size));
  return list
    .toString('utf8')
    .split('\0')
    .filter((n) => n !== '');
}

export function getXattr(path: Uint8Array, name: string): Uint8Array {
  const c = libc();
  const p = cPath(path);
  const n = cPath(name);
  const value = sized('lgetxattr', path, (buf, size) => c.lgetxattr(p, n, buf, size));
  return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
}
