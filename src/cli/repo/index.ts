// `ferry repo ...`: each sub-command loads when named, so a backup does not pay for restore, check and prune modules
// at start-up (incremental backups are short enough for module loading to show).
import { defineCommand } from 'citty';
import { lazy } from '../lazy.ts';

export default defineCommand({
  meta: { name: 'repo', description: 'Work with a repository directly (restic format v2), without Kubernetes' },
  subCommands: {
    init: lazy(
      { name: 'init', description: 'Create a new encrypted repository (restic format version 2)' },
      () => import('./init.ts'),
    ),
    backup: lazy(
      {
        name: 'backup',
        description: 'Back up files and directories (or one device/image with --stream) into a new snapshot',
      },
      () => import('./backup.ts'),
    ),
    restore: lazy(
      {
        name: 'restore',
        description:
          'Restore a snapshot (or a path in it: ID:/path) into a directory, or a --stream snapshot into a file or device',
      },
      () => import('./restore.ts'),
    ),
    snapshots: lazy(
      { name: 'snapshots', description: 'List the snapshots in the repository, oldest first' },
      () => import('./snapshots.ts'),
    ),
    check: lazy(
      {
        name: 'check',
        description:
          'Check the repository structure and, with --read-data, every stored byte (takes the exclusive lock)',
      },
      () => import('./check.ts'),
    ),
    forget: lazy(
      {
        name: 'forget',
        description: 'Remove snapshots (their data stays until prune; --prune does both; takes the exclusive lock)',
      },
      () => import('./forget.ts'),
    ),
    prune: lazy(
      {
        name: 'prune',
        description: 'Delete data no snapshot uses and repack mostly-unused packs (takes the exclusive lock)',
      },
      () => import('./prune.ts'),
    ),
    copy: lazy(
      {
        name: 'copy',
        description:
          'Copy snapshots from another repository (--from-repo) into this one; copies made before are skipped',
      },
      () => import('./copy.ts'),
    ),
    key: lazy(
      { name: 'key', description: 'Manage the passwords (key files) of a repository' },
      () => import('./key.ts'),
    ),
    unlock: lazy(
      { name: 'unlock', description: 'Remove stale locks left by processes that died' },
      () => import('./unlock.ts'),
    ),
    retain: lazy(
      {
        name: 'retain',
        description: 'Extend the S3 Object Lock retention of everything the snapshots need (with --object-lock)',
      },
      () => import('./retain.ts'),
    ),
  },
});
