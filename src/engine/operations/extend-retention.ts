// Extending S3 Object Lock retention to what the kept snapshots need, under a shared lock: backups and copies run
// beside it, but no prune removes a file while its retention is being extended.
import { extendRetentionLocked, type RetentionResult } from '../object-lock/extend-retention.ts';
import type { Repository } from '../repository/repository.ts';
import { underLock, type LockingOptions } from './locked.ts';

export type { RetentionResult };

export function extendRetention(repo: Repository, opts: LockingOptions = {}): Promise<RetentionResult> {
  return underLock(repo, false, opts, (signal) => extendRetentionLocked(repo, signal));
}
