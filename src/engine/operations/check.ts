// A check, under the exclusive lock as restic's: a backup writing beside it would show packs and indexes half
// done, and a forget or prune would pull snapshots and packs from under it, so a verdict is only worth giving on a
// repository at rest.
import { checkRepository, type CheckOptions, type CheckResult } from '../check/check.ts';
import type { Repository } from '../repository/repository.ts';
import { underLock, type LockingOptions } from './locked.ts';

export type { CheckResult };

export function check(repo: Repository, opts: CheckOptions & LockingOptions = {}): Promise<CheckResult> {
  return underLock(repo, true, opts, (signal) => checkRepository(repo, { ...opts, signal }));
}
