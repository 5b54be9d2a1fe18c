// A backup: new data and a new snapshot under a shared lock, so backups run side by side and no prune, forget or
// check runs beside them.
import { backupLocked, type BackupOptions, type BackupResult } from '../backup/backup.ts';
import type { Repository } from '../repository/repository.ts';
import { underLock, type LockingOptions } from './locked.ts';

export type { BackupResult };

export function backup(repo: Repository, opts: BackupOptions & LockingOptions): Promise<BackupResult> {
  // a parent that could not be found fails the run once the lock is held (and so released); until then its
  // rejection is not an unhandled one
  const parent = Promise.resolve(opts.parent);
  parent.catch(() => undefined);
  return underLock(repo, false, opts, (signal) => backupLocked(repo, { ...opts, parent, signal }));
}
