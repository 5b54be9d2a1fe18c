// Reads a dataset once, whole, so that it is in the page cache before the first tool reads it. Without this the
// first backup of a run read whatever earlier work had pushed out of the cache (the free memory the run writes at
// its start, other datasets, restores), and ferry, which runs first in each repetition, paid for it: its first full
// backup of full-size A took 17.6 and 19.0 s in two runs where its second took 13.9 and 16.2.
import { closeSync, openSync, opendirSync, readSync } from 'node:fs';
import { join } from 'node:path';

const chunk = Buffer.allocUnsafe(1 << 20);

/** Reads every regular file under `path` (or `path` itself) to its end; returns the bytes read. */
export function warm(path: string): number {
  let dir;
  try {
    dir = opendirSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOTDIR') throw err;
    return readWhole(path);
  }
  let bytes = 0;
  try {
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) bytes += warm(full);
      else if (entry.isFile()) bytes += readWhole(full);
    }
  } finally {
    dir.closeSync();
  }
  return bytes;
}

function readWhole(path: string): number {
  const fd = openSync(path, 'r');
  let bytes = 0;
  try {
    for (let n = readSync(fd, chunk); n > 0; n = readSync(fd, chunk)) bytes += n;
  } finally {
    closeSync(fd);
  }
  return bytes;
}
