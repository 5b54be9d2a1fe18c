// Reserving a file's blocks before it is written (fallocate), and giving back those it turned out not to need: the
// file system can lay a large restored file out in one piece rather than as its blobs happen to land, and ext4's
// delayed allocation does not stop the writer when the target fills. A file system without fallocate simply
// allocates as the writes come; it is asked once, not for every file.
import { constants } from 'node:os';
import { libc } from './libc.ts';

const FALLOC_FL_KEEP_SIZE = 1;
const FALLOC_FL_PUNCH_HOLE = 2;

/** set once a file system said it has no fallocate: every later file would be refused the same way */
let unsupported = false;

/**
 * Reserves `length` bytes of `fd` from `offset` without changing its size; false when nothing was reserved (the
 * file system cannot, or is full: the writes then fail or succeed on their own, as without a reservation).
 */
export function preallocate(fd: number, length: number, offset = 0): boolean {
  if (unsupported || length <= 0) return false;
  const c = libc();
  if (c.fallocate(fd, FALLOC_FL_KEEP_SIZE, BigInt(offset), BigInt(length)) === 0) return true;
  const errno = c.errno();
  if (errno === constants.errno.EOPNOTSUPP || errno === constants.errno.ENOSYS) unsupported = true;
  return false;
}

/**
 * Makes `length` bytes of `fd` from `offset` a hole again, keeping the size: for a reserved range that is to read
 * as zeros. A failure leaves the range reserved and unwritten, which reads as zeros too, so it is not an error.
 */
export function punchHole(fd: number, offset: number, length: number): void {
  if (length > 0) libc().fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, BigInt(offset), BigInt(length));
}
