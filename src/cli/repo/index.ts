// `ferry repo ...`: each sub-command loads when named, so a backup does not pay for restore, check and prune modules
// at start-up (incremental backups are short enough for module loading to show).
import { defineCommand } from 'citty';
import { lazyCommands } from '../lazy.ts';

export default defineCommand({
  meta: { name: 'repo', description: 'Work with a repository directly (restic format v2), without Kubernetes' },
  subCommands: lazyCommands({
    init: ['Create a new encrypted repository (restic format version 2)', () => import('./init.ts')],
    backup: [
      'Back up files and directories (or one device/image with --stream) into a new snapshot',
      () => import('./backup.ts'),
    ],
    restore: [
      'Restore a snapshot (or a path in it: ID:/path) into a directory, or a --stream snapshot into a file or device',
      () => import('./restore.ts'),
    ],
    snapshots: ['List the snapshots in the repository, oldest first', () => import('./snapshots.ts')],
    check: [
      'Check the repository structure and, with --read-data, every stored byte (takes the exclusive lock)',
      () => import('./check.ts'),
    ],
    forget: [
      'Remove snapshots (their data stays until prune; --prune does both; takes the exclusive lock)',
      () => import('./forget.ts'),
    ],
    prune: [
      'Delete data no snapshot uses and repack mostly-unused packs (takes the exclusive lock)',
      () => import('./prune.ts'),
    ],
    copy: [
      'Copy snapshots from another repository (--from-repo) into this one; copies made before are skipped',
      () => import('./copy.ts'),
    ],
    key: ['Manage the passwords (key files) of a repository', () => import('./key.ts')],
    unlock: ['Remove stale locks left by processes that died', () => import('./unlock.ts')],
    retain: [
      'Extend the S3 Object Lock retention of everything the snapshots need (with --object-lock)',
      () => import('./retain.ts'),
    ],
  }),
});
