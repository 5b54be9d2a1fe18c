// Reserving a file's blocks before it is written (fallocate), and giving back those it turned out not to need: the
// file system can lay a large restored file out in one piece rather than as its blobs happen to land, and ext4's
// delayed allocation does not stop the writer when the target fills. A file system without fallocate simply
// allocates as the writes come; it is asked once, not for every file.
//
// The lengths reserved come from a repository (its index and trees), which may lie: a reservation is made only when
// it fits the file system's free space, since fallocate allocates as it goes and a lie of a terabyte would fill the
// target before the blob that told it was ever read and found wrong.
import { constants } from 'node:os';
import { libc } from './libc.ts';

const FALLOC_FL_KEEP_SIZE = 1;
const FALLOC_FL_PUNCH_HOLE = 2;

/** set once a file system said it has no fallocate: every later file would be refused the same way */
let unsupported = false;

/** Bytes an unprivileged writer may still allocate on `fd`'s file system (struct statfs: f_bsize, f_bavail). */
export function freeBytes(fd: number): number {
  const buf = Buffer.alloc(128);
  if (libc().fstatfs(fd, buf) !== 0) return 0;
  return Number(buf.readBigInt64LE(8) * buf.readBigUInt64LE(32));
}

/**
 * Reserves `ranges` of `fd` without changing its size, when they fit in `available` bytes (by default what the file
 * system has free); false when nothing was reserved (too much asked, no fallocate, or the file system is full: the
 * writes then fail or succeed on their own, as without a reservation).
 */
export function preallocate(
  fd: number,
  ranges: readonly { offset: number; length: number }[],
  available = freeBytes(fd),
): boolean {
  const total = ranges.reduce((n, r) => n + r.length, 0);
  if (unsupported || total <= 0 || total > available) return false;
  const c = libc();
  let reserved = false;
  for (const r of ranges) {
    if (c.fallocate(fd, FALLOC_FL_KEEP_SIZE, BigInt(r.offset), BigInt(r.length)) === 0) {
      reserved = true;
      continue;
    }
    const errno = c.errno();
    if (errno === constants.errno.EOPNOTSUPP || errno === constants.errno.ENOSYS) unsupported = true;
    break;
  }
  return reserved;
}

/**
 * Makes `length` bytes of `fd` from `offset` a hole again, keeping the size: for a reserved range that is to read
 * as zeros. A failure leaves the range reserved and unwritten, which reads as zeros too, so it is not an error.
 */
export function punchHole(fd: number, offset: number, length: number): void {
  if (length > 0) libc().fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, BigInt(offset), BigInt(length));
}
