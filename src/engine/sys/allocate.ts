// Reserving a file's blocks before it is written (fallocate): the file system can lay a large restored file out
// in one piece rather than as its blobs happen to land. A file system without fallocate simply allocates as the
// writes come.
import { libc } from './libc.ts';

/** Reserves `length` bytes from the start of `fd` without changing its size; false when the file system cannot. */
export function preallocate(fd: number, length: number): boolean {
  const FALLOC_FL_KEEP_SIZE = 1;
  return length > 0 && libc().fallocate(fd, FALLOC_FL_KEEP_SIZE, 0n, BigInt(length)) === 0;
}
