// Compares two directory trees the way a user would judge a restore: same entries, types, content, modes,
// ownership, mtimes (to the nanosecond), symlink targets, hard-link groups and sparseness. Returns the
// differences as readable lines, so a failing test says exactly what was lost.
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import type { BigIntStats } from 'node:fs';

export interface CompareOptions {
  /** compare directory mtimes too (off when a tool cannot restore them) */
  dirTimes?: boolean;
  ownership?: boolean;
  /** require the restored copy of a sparse file to occupy no more blocks than the original, plus slack */
  sparse?: boolean;
}

interface Entry {
  st: BigIntStats;
  target?: string;
  hash?: string;
}

async function scan(root: string): Promise<Map<string, Entry>> {
  const out = new Map<string, Entry>();
  const walk = async (rel: Buffer): Promise<void> => {
    const full = Buffer.concat([Buffer.from(root), rel]);
    for (const name of await readdir(full, { encoding: 'buffer' })) {
      const r = Buffer.concat([rel, Buffer.from('/'), name]);
      const f = Buffer.concat([Buffer.from(root), r]);
      const st = await lstat(f, { bigint: true });
      const e: Entry = { st };
      if (st.isSymbolicLink()) e.target = (await readlink(f, { encoding: 'buffer' })).toString('hex');
      if (st.isFile())
        e.hash = createHash('sha256')
          .update(await readFile(f))
          .digest('hex');
      out.set(r.toString('latin1'), e);
      if (st.isDirectory()) await walk(r);
    }
  };
  await walk(Buffer.alloc(0));
  return out;
}

export async function compareTrees(a: string, b: string, opts: CompareOptions = {}): Promise<string[]> {
  const { dirTimes = true, ownership = true, sparse = true } = opts;
  const [ea, eb] = await Promise.all([scan(a), scan(b)]);
  const diffs: string[] = [];
  const show = (k: string) => JSON.stringify(Buffer.from(k, 'latin1').toString());
  for (const k of ea.keys()) if (!eb.has(k)) diffs.push(`${show(k)} is missing`);
  for (const k of eb.keys()) if (!ea.has(k)) diffs.push(`${show(k)} is extra`);
  const linkGroups = (m: Map<string, Entry>) => {
    const byInode = new Map<bigint, string[]>();
    for (const [k, e] of m)
      if (e.st.isFile() && e.st.nlink > 1n) byInode.set(e.st.ino, [...(byInode.get(e.st.ino) ?? []), k]);
    return new Set([...byInode.values()].map((g) => g.sort().join('|')));
  };
  for (const [k, x] of ea) {
    const y = eb.get(k);
    if (!y) continue;
    const s = show(k);
    if ((x.st.mode & 0o170000n) !== (y.st.mode & 0o170000n)) {
      diffs.push(`${s}: type differs`);
      continue;
    }
    if (!x.st.isSymbolicLink() && x.st.mode !== y.st.mode)
      diffs.push(`${s}: mode ${x.st.mode.toString(8)} != ${y.st.mode.toString(8)}`);
    if (ownership && (x.st.uid !== y.st.uid || x.st.gid !== y.st.gid))
      diffs.push(`${s}: owner ${x.st.uid}:${x.st.gid} != ${y.st.uid}:${y.st.gid}`);
    if (x.hash !== y.hash) diffs.push(`${s}: content differs`);
    if (x.target !== y.target) diffs.push(`${s}: symlink target differs`);
    if (x.st.isFile() && x.st.size !== y.st.size) diffs.push(`${s}: size ${x.st.size} != ${y.st.size}`);
    if ((dirTimes || !x.st.isDirectory()) && x.st.mtimeNs !== y.st.mtimeNs)
      diffs.push(`${s}: mtime ${x.st.mtimeNs} != ${y.st.mtimeNs}`);
    if (sparse && x.st.isFile() && x.st.blocks < x.st.size / 512n / 2n && y.st.blocks > x.st.blocks + 256n) {
      diffs.push(`${s}: sparse file restored dense (${y.st.blocks} blocks, original ${x.st.blocks})`);
    }
  }
  const ga = linkGroups(ea);
  const gb = linkGroups(eb);
  for (const g of ga) if (!gb.has(g)) diffs.push(`hard links ${g} are not linked in the copy`);
  return diffs;
}
