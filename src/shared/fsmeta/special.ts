// Creating fifos and device nodes, which Node cannot do: mkfifo (many per process) and mknod (one per
// process, root only) from coreutils. Both take paths as arguments, and Node can only pass strings to
// a child, so they create entries under plain names in a staging folder and rename them into place
// (rename takes raw bytes). The staging folder must be on the same file system as the targets.
// Entries are created with mode 0600, as restic does; restoreMetadata sets the recorded mode later.
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TreeNode } from '../tree/node.ts';
import { runTool } from './tool.ts';

export interface SpecialEntry {
  path: Buffer;
  node: TreeNode;
}

const fifosPerProcess = 500;

/** Major number of a Linux dev_t (glibc's encoding, which restic records as st_rdev). */
export function deviceMajor(rdev: bigint): number {
  return Number(((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn));
}

export function deviceMinor(rdev: bigint): number {
  return Number((rdev & 0xffn) | ((rdev >> 12n) & ~0xffn));
}

async function check(tool: Promise<{ code: number; stderr: string }>, what: string): Promise<void> {
  const r = await tool;
  if (r.code !== 0) throw new Error(`could not create ${what}: ${r.stderr.trim()}`);
}

/** Creates the fifos and device nodes among `entries`; sockets are skipped as restic skips them. */
export async function createSpecialFiles(stagingDir: string, entries: readonly SpecialEntry[]): Promise<void> {
  const fifos = entries.filter((e) => e.node.type === 'fifo');
  const devices = entries.filter((e) => e.node.type === 'dev' || e.node.type === 'chardev');
  const other = entries.find((e) => !['fifo', 'dev', 'chardev', 'socket'].includes(e.node.type));
  if (other) throw new Error(`${other.path.toString('utf8')} is a ${other.node.type}, not a fifo, device or socket`);
  if (fifos.length + devices.length === 0) return;
  const dir = await mkdtemp(join(stagingDir, '.ferry-special-'));
  try {
    for (let i = 0; i < fifos.length; i += fifosPerProcess) {
      const batch = fifos.slice(i, i + fifosPerProcess);
      const names = batch.map((_e, j) => join(dir, String(i + j)));
      await check(runTool('mkfifo', ['-m', '600', '--', ...names]), `${batch.length} fifos`);
      for (let j = 0; j < batch.length; j++) await rename(names[j], batch[j].path);
    }
    for (const [i, e] of devices.entries()) {
      const name = join(dir, `d${i}`);
      const kind = e.node.type === 'dev' ? 'b' : 'c';
      const args = ['-m', '600', '--', name, kind, String(deviceMajor(e.node.device)), String(deviceMinor(e.node.device))];
      await check(runTool('mknod', args), `device node ${e.path.toString('utf8')} (needs root)`);
      await rename(name, e.path);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
