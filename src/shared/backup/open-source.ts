// Opening files to back them up without touching their access time (as restic does): O_NOATIME, which the
// kernel allows only to the file's owner or root, so fall back to a plain open when it is refused.
import { closeSync, constants, openSync, readFileSync } from 'node:fs';
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

/** A whole (small) file, read synchronously: for worker threads, whose event loop has nothing better to do. */
export function readForBackupSync(path: Uint8Array): Buffer {
  const fd = openSyncForBackup(Buffer.from(path.buffer, path.byteOffset, path.byteLength));
  try {
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
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
