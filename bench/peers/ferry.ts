// ferry, run as its CLI process (the way a Job runs it), so it is measured exactly like the peers.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { Command } from '../measure/child.ts';
import { baseEnv, benchPassword } from './peer.ts';
import type { Peer, Place, RepoCommands } from './peer.ts';

const root = join(import.meta.dirname, '..', '..');
const nodeBin = join(root, 'node_modules', '.bin', 'node');
const cli = join(root, 'src', 'entry', 'ferry.mjs');

function location(place: Place): string {
  return place.kind === 'local' ? place.dir : `s3:${place.endpoint}/${place.bucket}`;
}

/**
 * malloc's settings as the image sets them for every process (Containerfile): a Job's ferry then starts once, where
 * a ferry started without them starts itself again to set them (ferry.mjs), 30-40 ms more for each command.
 */
export const imageTunables = 'glibc.malloc.mmap_threshold=4194304:glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1';

function env(place: Place, work: string): Record<string, string> {
  const e = { ...baseEnv(work), FERRY_PASSWORD: benchPassword, GLIBC_TUNABLES: imageTunables };
  return place.kind === 's3' ? { ...e, AWS_ACCESS_KEY_ID: place.accessKey, AWS_SECRET_ACCESS_KEY: place.secretKey } : e;
}

export const ferryPeer: Peer = {
  name: 'ferry',
  async version() {
    const { stdout } = await promisify(execFile)(nodeBin, ['--version']);
    const { stdout: rev } = await promisify(execFile)('git', ['-C', root, 'rev-parse', '--short', 'HEAD']).catch(
      () => ({ stdout: '?' }),
    );
    return `ferry (git ${rev.trim()}) on node ${stdout.trim()}`;
  },
  repo(place, work): RepoCommands {
    const run = (...args: string[]): Command => ({
      argv: [nodeBin, cli, 'repo', ...args, '--repo', location(place)],
      env: env(place, work),
    });
    return {
      init: () => [run('init')],
      backup: (path) => run('backup', '--json', path),
      backupStream: (file, name) => run('backup', '--json', '--stream', name, file),
      backupChanged: (file, name, rangesFile) =>
        run('backup', '--json', '--stream', name, '--changed-ranges', rangesFile, file),
      restore: (source, target) => run('restore', '--json', source.snapshot ?? 'latest', '--target', target),
      snapshots: () => run('snapshots', '--json'),
    };
  },
};

/** What `ferry repo backup --json` printed last, as far as the suite reads it. */
export interface FerrySummary {
  snapshot_id: string;
  data_blobs: number;
  block_read?: { mode: string; bytes_read: number; size: number; reason?: string };
}

/** The summary document at the end of a `ferry repo backup --json` run's output (warnings may come before it). */
export function ferrySummary(output: string): FerrySummary {
  const start = output.lastIndexOf('\n{\n');
  const text = start < 0 ? output.slice(output.indexOf('{')) : output.slice(start + 1);
  try {
    const doc = JSON.parse(text) as FerrySummary;
    if (typeof doc.snapshot_id === 'string') return doc;
  } catch {
    // reported below with what was printed
  }
  throw new Error(`ferry printed no backup summary: ${output.slice(-400)}`);
}
