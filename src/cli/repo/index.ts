// `ferry repo ...`: each sub-command loads when named, so a backup does not pay for restore, check and prune modules
// at start-up (incremental backups are short enough for module loading to show).
import { defineCommand } from 'citty';
import { lazy } from '../lazy.ts';

export default defineCommand({
  meta: { name: 'repo', description: 'Work with a repository directly (restic format v2), without Kubernetes' },
  subCommands: {
    init: lazy(() => import('./init.ts')),
    backup: lazy(() => import('./backup.ts')),
    restore: lazy(() => import('./restore.ts')),
    snapshots: lazy(() => import('./snapshots.ts')),
    check: lazy(() => import('./check.ts')),
    forget: lazy(() => import('./forget.ts')),
    prune: lazy(() => import('./prune.ts')),
    copy: lazy(() => import('./copy.ts')),
    key: lazy(() => import('./key.ts')),
    unlock: lazy(() => import('./unlock.ts')),
    retain: lazy(() => import('./retain.ts')),
  },
});
