// restic (the pinned build of test/tools), with its default local cache in the repository's private folder, as
// restic-based movers run it.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from '../../test/support/tools.ts';
import type { Command } from '../measure/child.ts';
import { baseEnv, benchPassword } from './peer.ts';
import type { Peer, Place, RepoCommands } from './peer.ts';

function location(place: Place): string {
  return place.kind === 'local' ? place.dir : `s3:${place.endpoint}/${place.bucket}`;
}

function env(place: Place, work: string): Record<string, string> {
  const e = { ...baseEnv(work), RESTIC_PASSWORD: benchPassword, RESTIC_CACHE_DIR: join(work, 'cache') };
  return place.kind === 's3' ? { ...e, AWS_ACCESS_KEY_ID: place.accessKey, AWS_SECRET_ACCESS_KEY: place.secretKey } : e;
}

export async function resticPeer(): Promise<Peer> {
  const bin = await toolPath('restic');
  return {
    name: 'restic',
    async version() {
      const { stdout } = await promisify(execFile)(bin, ['version']);
      return stdout.trim().split('\n')[0];
    },
    repo(place, work): RepoCommands {
      const run = (...args: string[]): Command => ({
        argv: [bin, '-r', location(place), '-q', ...args],
        env: env(place, work),
      });
      return {
        init: () => [run('init')],
        backup: (path) => run('backup', path),
        backupStream: (file, name) =>
          run('backup', '--stdin-filename', name, '--stdin-from-command', '--', 'cat', file),
        restore: (_source, target) => run('restore', 'latest', '--sparse', '--target', target),
        snapshots: () => run('snapshots', '--json'),
      };
    },
  };
}
