// A copy of snapshots from one repository into another, under a shared lock on each (restic's copy takes the same):
// copies and backups run side by side on either side, but no prune deletes the source packs being read or the
// destination packs being deduplicated against, and no forget removes a snapshot mid-copy. The source is locked
// first; a lock lost on either side stops the copy before its snapshot is written.
import { copyLocked, type CopyOptions, type CopyResult } from '../copy/copy.ts';
import type { Repository } from '../repository/repository.ts';
import { underLock, type LockingOptions } from './locked.ts';

export type { CopiedSnapshot, CopyResult } from '../copy/copy.ts';
export type { SnapshotFilter } from '../snapshot/select.ts';

/** The locking options apply to both repositories (`clearDeadLocks` is asked about each). */
export function copy(
  source: Repository,
  destination: Repository,
  opts: CopyOptions & LockingOptions = {},
): Promise<CopyResult> {
  return underLock(source, false, opts, (sourceHeld) =>
    underLock(destination, false, { ...opts, signal: sourceHeld }, (signal) =>
      copyLocked(source, destination, { ...opts, signal }),
    ),
  );
}
