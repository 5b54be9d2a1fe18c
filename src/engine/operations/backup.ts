// A backup: new data and a new snapshot under a shared lock, so backups run side by side and no prune, forget or
// check runs beside them. The parent, and a snapshot an earlier run of the same backup already saved, are chosen
// from the snapshots listed under that lock: no forget can remove the parent between its choice and its use.
import { backupLocked, type BackupOptions as RunOptions, type BackupResult } from '../backup/backup.ts';
import type { Repository } from '../repository/repository.ts';
import { listSnapshots } from '../repository/snapshots.ts';
import type { SnapshotEntry } from '../snapshot/select.ts';
import { underLock, type LockingOptions } from './locked.ts';

export type { BackupResult };
export type { Progress } from '../concurrency/progress.ts';

type Choose = (snapshots: SnapshotEntry[]) => SnapshotEntry | undefined;

export interface BackupOptions extends Omit<RunOptions, 'parent' | 'signal'>, LockingOptions {
  /**
   * the snapshot whose unchanged files are not read again: one already found, or chosen from the snapshots (a
   * throw, such as no snapshot matching a name, fails the backup)
   */
  parent?: SnapshotEntry | Choose;
  /** a snapshot an earlier run of this same backup saved before it was stopped: taken as the result, nothing is read */
  saved?: Choose;
}

/** The new snapshot, or, when `saved` found one, that snapshot (`taken`). */
export function backup(
  repo: Repository,
  opts: BackupOptions & { saved: Choose },
): Promise<BackupResult | { taken: SnapshotEntry }>;
export function backup(repo: Repository, opts: BackupOptions & { saved?: undefined }): Promise<BackupResult>;
export function backup(repo: Repository, opts: BackupOptions): Promise<BackupResult | { taken: SnapshotEntry }> {
  return underLock(repo, false, opts, async (signal) => {
    const { parent: chooseParent, saved, ...run } = opts;
    // listed beside the index load, which the backup starts with, unless an earlier run's snapshot may end it first
    const listed = typeof chooseParent === 'function' || saved ? listSnapshots(repo, signal) : undefined;
    listed?.catch(() => undefined);
    const taken = saved && saved(await listed!);
    if (taken) return { taken };
    const parent = typeof chooseParent === 'function' ? listed!.then(chooseParent) : chooseParent;
    return backupLocked(repo, { ...run, parent, signal });
  });
}
