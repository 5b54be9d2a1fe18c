// Looks at a filesystem repository from outside, as an operator with `ls` would: which packs, index files and
// snapshots are stored, and how big they are. Fault tests use it to measure what a run left behind and to
// damage files on purpose.
import { chmod, readdir, readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface StoredFile {
  id: string;
  path: string;
  size: number;
}

const tempMarker = '-tmp-';

async function filesIn(dir: string): Promise<StoredFile[]> {
  const out: StoredFile[] = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (name.includes(tempMarker)) continue;
    const path = join(dir, name);
    const st = await stat(path);
    if (st.isFile()) out.push({ id: name, path, size: st.size });
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

/** Complete pack files (temporary files of interrupted saves left out). */
export async function packFiles(repo: string): Promise<StoredFile[]> {
  const out: StoredFile[] = [];
  for (const sub of (await readdir(join(repo, 'data')).catch(() => [] as string[])).sort())
    out.push(...(await filesIn(join(repo, 'data', sub))));
  return out;
}

/** Temporary files a crashed save left anywhere in the repository. */
export async function tempFiles(repo: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(dir, e.name));
      else if (e.name.includes(tempMarker)) out.push(join(dir, e.name));
    }
  };
  await walk(repo);
  return out;
}

export function storedFiles(repo: string, folder: 'index' | 'snapshots' | 'locks' | 'keys'): Promise<StoredFile[]> {
  return filesIn(join(repo, folder));
}

export function totalSize(files: StoredFile[]): number {
  return files.reduce((n, f) => n + f.size, 0);
}

/** Repository files are read-only (as restic leaves them); damage needs write permission first. */
async function writable(path: string): Promise<void> {
  await chmod(path, 0o600);
}

/** Flips every bit of the byte at `offset` (negative: from the end). */
export async function flipByte(path: string, offset: number): Promise<void> {
  await writable(path);
  const bytes = await readFile(path);
  const at = offset < 0 ? bytes.length + offset : offset;
  bytes[at] ^= 0xff;
  await writeFile(path, bytes);
}

export async function truncateFile(path: string, size: number): Promise<void> {
  await writable(path);
  await truncate(path, size);
}
