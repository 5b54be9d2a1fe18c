// Bytes in a folder tree (apparent file sizes), for repository sizes and restore checks.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

export interface TreeCount {
  files: number;
  bytes: number;
  /** bytes the files occupy on disk (st_blocks), which shows whether holes survived */
  allocated: number;
}

export async function countTree(root: string): Promise<TreeCount> {
  const count: TreeCount = { files: 0, bytes: 0, allocated: 0 };
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) {
        const st = await lstat(path);
        count.files++;
        count.bytes += st.size;
        count.allocated += st.blocks * 512;
      }
    }
  };
  await walk(root);
  return count;
}

export async function treeBytes(root: string): Promise<number> {
  return (await countTree(root)).bytes;
}
