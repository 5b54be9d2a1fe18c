// Opening files to back them up without touching their access time (as restic does): O_NOATIME, which the
// kernel allows only to the file's owner or root, so fall back to a plain open when it is refused.
import { constants } from 'node:fs';
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

export async function readForBackup(path: Buffer): Promise<Buffer> {
  const fh = await openForBackup(path);
  try {
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}
