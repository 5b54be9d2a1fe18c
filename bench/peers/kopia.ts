// Kopia (the pinned build of test/tools), as Velero's data mover runs it: its own cache, zstd compression (the
// same algorithm as restic and ferry, so stored bytes compare), no update checks.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from '../../test/support/tools.ts';
import type { Command } from '../measure/child.ts';
import { baseEnv, benchPassword } from './peer.ts';
import type { Peer, Place, RepoCommands } from './peer.ts';

/** A stream is snapshotted as a virtual folder holding one file; this is that folder's (never existing) path. */
const streamRoot = '/ferry-bench-stream';

function env(place: Place, work: string): Record<string, string> {
  const e = {
    ...baseEnv(work),
    KOPIA_PASSWORD: benchPassword,
    KOPIA_CONFIG_PATH: join(work, 'kopia.config'),
    KOPIA_CACHE_DIRECTORY: join(work, 'cache'),
    KOPIA_LOG_DIR: join(work, 'logs'),
    KOPIA_CHECK_FOR_UPDATES: 'false',
  };
  return place.kind === 's3' ? { ...e, AWS_ACCESS_KEY_ID: place.accessKey, AWS_SECRET_ACCESS_KEY: place.secretKey } : e;
}

function storageArgs(place: Place): string[] {
  if (place.kind === 'local') return ['filesystem', '--path', place.dir];
  const url = new URL(place.endpoint);
  return [
    's3',
    '--bucket',
    place.bucket,
    '--endpoint',
    url.host,
    ...(url.protocol === 'http:' ? ['--disable-tls'] : []),
  ];
}

export async function kopiaPeer(): Promise<Peer> {
  const bin = await toolPath('kopia');
  return {
    name: 'kopia',
    async version() {
      const { stdout } = await promisify(execFile)(bin, ['--version']);
      return `kopia ${stdout.trim().split('\n')[0]}`;
    },
    repo(place, work): RepoCommands {
      const run = (...args: string[]): Command => ({ argv: [bin, ...args], env: env(place, work) });
      return {
        init: () => [
          run('repository', 'create', ...storageArgs(place)),
          run('policy', 'set', '--global', '--compression', 'zstd'),
        ],
        backup: (path) => run('snapshot', 'create', '--no-progress', path),
        backupStream: (file, name) => ({
          ...run('snapshot', 'create', '--no-progress', '--stdin-file', name, streamRoot),
          stdinFile: file,
        }),
        restore: (source, target) =>
          run('restore', '--no-progress', '--write-sparse-files', 'path' in source ? source.path : streamRoot, target),
        snapshots: () => run('snapshot', 'list', '--all', '--json'),
      };
    },
  };
}
