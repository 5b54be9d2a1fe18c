// The size of what a block backup reads: a block device's size is not in stat(2), so it comes from sysfs.
import { readFile, stat } from 'node:fs/promises';

/** Bytes of a block device (or of a regular file standing in for one); undefined when it cannot be told. */
export async function deviceSize(path: string): Promise<number | undefined> {
  const st = await stat(path);
  if (st.isFile()) return st.size;
  if (!st.isBlockDevice()) return undefined;
  const major = Math.floor(st.rdev / 256) & 0xfff;
  const minor = (st.rdev & 0xff) | (Math.floor(st.rdev / 4096) & 0xfff00);
  try {
    const sectors = Number((await readFile(`/sys/dev/block/${major}:${minor}/size`, 'utf8')).trim());
    return Number.isFinite(sectors) ? sectors * 512 : undefined;
  } catch {
    return undefined;
  }
}
