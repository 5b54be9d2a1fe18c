// The command tree of `ferry`. Command groups load when named, so `ferry repo ...` (run in step pods and by hand on
// large repositories) does not pay for the Kubernetes client's modules (their memory and CPU time at start-up).
import { defineCommand } from 'citty';
import { lazyCommands } from './lazy.ts';

export const main = defineCommand({
  meta: {
    name: 'ferry',
    version: '0.1.0',
    description: 'Back up Kubernetes volumes into restic-compatible repositories',
  },
  subCommands: lazyCommands({
    backup: ['Back up PVCs and follow their backups (DataUploads)', () => import('./kube/backup.ts')],
    restore: ['Restore backups into PVCs and follow the restores (DataDownloads)', () => import('./kube/restore.ts')],
    rerun: [
      'Start the current step of a backup or restore again: KIND/NAME, e.g. backup/nightly',
      () => import('./kube/rerun.ts'),
    ],
    cancel: [
      'Cancel a backup or restore: KIND/NAME, e.g. backup/nightly or datadownload/copy',
      () => import('./kube/cancel.ts'),
    ],
    repo: ['Work with a repository directly (restic format v2), without Kubernetes', () => import('./repo/index.ts')],
    location: [
      "BackupStorageLocations: the S3 buckets ferry backs up into (in ferry's namespace)",
      () => import('./location/index.ts'),
    ],
    install: [
      'Install or upgrade ferry in a cluster from deploy/ (CRDs, dispatcher, webhook, RBAC, Job templates)',
      () => import('./install/install.ts'),
    ],
    doctor: [
      "Check ferry's install in a cluster and say how to fix what is wrong (exit 1 when something is)",
      () => import('./doctor/doctor.ts'),
    ],
    schedule: [
      'Backups on a cron schedule, with expiry and retention (BackupSchedules)',
      () => import('./schedule/index.ts'),
    ],
    copy: [
      'Copy a backup into another storage location (a DataCopy; with --wait, follow it to the end)',
      () => import('./copy/copy.ts'),
    ],
    copies: ['Copies of backups in other locations (DataCopies)', () => import('./copy/copies.ts')],
    'copy-policy': [
      "Copy policies: backups of one location copied into another (in ferry's namespace)",
      () => import('./copy/policies.ts'),
    ],
  }),
});
