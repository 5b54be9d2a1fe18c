// A tree that must not change: everything lstat says about each entry (type, mode, owner, size, times with
// nanoseconds, link count, ctime, which moves on any chmod, chown, utimes or link) and every file's content, so a
// comparison before and after shows any write, and any new or removed entry.
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export async function describeTree(root: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const visit = async (path: string, rel: string): Promise<void> => {
    const st = await lstat(path, { bigint: true });
    let what = `mode=${st.mode.toString(8)} uid=${st.uid} gid=${st.gid} size=${st.size} nlink=${st.nlink} rdev=${st.rdev} mtime=${st.mtimeNs} atime=${st.atimeNs} ctime=${st.ctimeNs}`;
    if (st.isFile()) what += ` content=${(await readFile(path)).toString('base64')}`;
    if (st.isSymbolicLink()) what += ` target=${await readlink(path)}`;
    out.set(rel, what);
    if (st.isDirectory())
      for (const name of (await readdir(path)).sort()) await visit(join(path, name), `${rel}/${name}`);
  };
  await visit(root, '.');
  return out;
}
