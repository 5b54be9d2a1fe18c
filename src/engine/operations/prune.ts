// A prune: data no snapshot uses deleted, mostly-unused packs repacked, under the exclusive lock, so no backup,
// restore or check is reading or writing packs meanwhile.
import { pruneLocked, type PruneOptions, type PruneResult } from '../prune/prune.ts';
import type { Repository } from '../repository/repository.ts';
import { underLock, type LockingOptions } from './locked.ts';

export type { PruneResult };
export type { Retained } from '../repository/remove-unlocked.ts';

export function prune(repo: Repository, opts: PruneOptions & LockingOptions = {}): Promise<PruneResult> {
  return underLock(repo, true, opts, (signal) => pruneLocked(repo, { ...opts, signal }));
}
