// Where a restore writes: a fresh ext4 filesystem of its own (a sparse image, loop-mounted), as a restore into a new
// volume would find it. Restoring into a folder of the work filesystem made each restore pay for the files the
// previous one left and the suite removed: ext4 without a journal checks every recently freed inode before it reuses
// one, and quick A restores rose from 2.3 to 4.2 s over three repetitions, where on a fresh filesystem ferry took
// 1.9-2.1 s and restic 1.8-1.9 s every time. Mounting needs root, mkfs.ext4 and a loop device; without them restores
// go to a folder and the report says so.
import { execFile } from 'node:child_process';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const GiB = 2 ** 30;

export interface RestoreFolder {
  dir: string;
  /** 'fresh ext4' when the folder is the root of a filesystem made for this restore, else 'work folder' */
  kind: RestoreFolderKind;
  release(): Promise<void>;
}

export type RestoreFolderKind = 'fresh ext4' | 'work folder';

/** Room for `bytes` in `files` files (4 KiB blocks each at least) with a margin, and an inode for each. */
export function imageSize(bytes: number, files: number): { bytes: number; inodes: number } {
  const data = bytes + files * 4096;
  return { bytes: Math.ceil((data * 1.25 + 256 * 2 ** 20) / GiB) * GiB, inodes: Math.ceil(files * 1.1) + 16384 };
}

/** An empty folder for one restore under `work` (made if missing), on a filesystem of its own when this machine allows it. */
export async function restoreFolder(work: string, bytes: number, files: number): Promise<RestoreFolder> {
  const dir = join(work, 'restored');
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const plain: RestoreFolder = { dir, kind: 'work folder', release: () => rm(dir, { recursive: true, force: true }) };
  if (process.getuid?.() !== 0) return plain;
  const image = join(work, 'restored.img');
  const size = imageSize(bytes, files);
  try {
    await run('truncate', ['-s', String(size.bytes), image]);
    await run('mkfs.ext4', ['-q', '-F', '-N', String(size.inodes), '-E', 'nodiscard', image]);
    await run('mount', ['-o', 'loop', image, dir]);
  } catch {
    await rm(image, { force: true });
    return plain;
  }
  return {
    dir,
    kind: 'fresh ext4',
    async release() {
      await run('umount', [dir]);
      await rm(image, { force: true });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
