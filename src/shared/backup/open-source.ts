// Opening files to back them up without touching their access time (as restic does): O_NOATIME, which the
// kernel allows only to the file's owner or root, so fall back to a plain open when it is refused.
import { closeSync, constants, openSync, readFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

let noAtimeAllowed = true;

export async function openForBackup(path: string | Buffer): Promise<FileHandle> {
  if (noAtimeAllowed) {
    try {
      return await open(path, constants.O_RDONLY | constants.O_NOATIME);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
      noAtimeAllowed = false;
    }
  }
  return open(path, constants.O_RDONLY);
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
  if (noAtimeAllowed) {
    try {
      return openSync(path, constants.O_RDONLY | constants.O_NOATIME);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
      noAtimeAllowed = false;
    }
  }
  return openSync(path, constants.O_RDONLY);
}
