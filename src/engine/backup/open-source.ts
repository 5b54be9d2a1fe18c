// Opening files to back them up without touching their access time (as restic does): O_NOATIME, which the
// kernel allows only to the file's owner or root, so fall back to a plain open when it is refused.
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

const plain = constants.O_RDONLY;
let noAtimeAllowed = true;

/** The flags to try first: O_NOATIME until the kernel has refused it once. */
function firstFlags(): number {
  return noAtimeAllowed ? plain | constants.O_NOATIME : plain;
}

/** Whether an open with `flags` failed only for O_NOATIME: it is then dropped for good, and a plain open follows. */
function noAtimeRefused(err: unknown, flags: number): boolean {
  if (flags === plain || (err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  noAtimeAllowed = false;
  return true;
}

export async function openForBackup(path: string | Buffer): Promise<FileHandle> {
  const flags = firstFlags();
  try {
    return await open(path, flags);
  } catch (err) {
    if (!noAtimeRefused(err, flags)) throw err;
  }
  return open(path, plain);
}

/** Where a batch's files are read to: a buffer, and how far it is filled. */
export interface ReadBuffer {
  bytes: Buffer;
  used: number;
}

/**
 * Appends a whole (small) file to `into`, read synchronously (for worker threads, whose event loop has nothing better
 * to do), growing the buffer when the file does not fit. Reading whole files this way allocates nothing per file:
 * readFileSync on a descriptor allocates 64 KiB for every file, however small.
 */
export function appendFileSync(path: Uint8Array, into: ReadBuffer): void {
  const fd = openSyncForBackup(Buffer.from(path.buffer, path.byteOffset, path.byteLength));
  try {
    for (;;) {
      // a file may have grown since it was listed: it is read to its end, whatever its size then
      if (into.used === into.bytes.length) into.bytes = grown(into.bytes, into.used);
      const n = readSync(fd, into.bytes, into.used, into.bytes.length - into.used, null);
      if (n === 0) return;
      into.used += n;
    }
  } finally {
    closeSync(fd);
  }
}

function grown(bytes: Buffer, used: number): Buffer {
  const bigger = Buffer.allocUnsafeSlow(Math.max(bytes.length * 2, 64 << 10));
  bytes.copy(bigger, 0, 0, used);
  return bigger;
}

function openSyncForBackup(path: Buffer): number {
  const flags = firstFlags();
  try {
    return openSync(path, flags);
  } catch (err) {
    if (!noAtimeRefused(err, flags)) throw err;
  }
  return openSync(path, plain);
}
