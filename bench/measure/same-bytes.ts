// Byte-for-byte comparison of a restored image with the one backed up, in pieces so a large image needs no large
// buffer; the suite's other restores are checked by file count and size, a block volume's by every byte.
import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

const piece = 16 << 20;

/** The offset of the first byte where files `a` and `b` differ (the shorter one's end if one is a prefix), or undefined. */
export async function firstDifference(a: string, b: string): Promise<number | undefined> {
  const [fa, fb] = [await open(a, 'r'), await open(b, 'r')];
  try {
    const [ba, bb] = [Buffer.allocUnsafe(piece), Buffer.allocUnsafe(piece)];
    for (let at = 0; ; at += piece) {
      const [{ bytesRead: na }, { bytesRead: nb }] = await Promise.all([
        fa.read(ba, 0, piece, at),
        fb.read(bb, 0, piece, at),
      ]);
      const n = Math.min(na, nb);
      for (let i = 0; i < n; i += 4096) {
        const end = Math.min(n, i + 4096);
        if (ba.compare(bb, i, end, i, end) !== 0) {
          let j = i;
          while (ba[j] === bb[j]) j++;
          return at + j;
        }
      }
      if (na !== nb) return at + n;
      if (na === 0) return undefined;
    }
  } finally {
    await fa.close();
    await fb.close();
  }
}

/** The one file restored under `dir` (at any depth), or an error naming what is there instead. */
export async function onlyFile(dir: string): Promise<string> {
  const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile());
  if (files.length !== 1) throw new Error(`${dir} holds ${files.length} files where one image was restored`);
  return join(files[0].parentPath, files[0].name);
}
