// Forgetting snapshots, and with `prune` freeing their data, under one exclusive lock (restic's forget takes it
// too): a retry after a conflict finds the snapshots still there and does both, never a forget without its prune.
import type { ID } from '../ids/id.ts';
import { pruneLocked, type PruneOptions, type PruneResult } from '../prune/prune.ts';
import type { Repository } from '../repository/repository.ts';
import { forgetSnapshots } from '../repository/snapshots.ts';
import { underLock, type LockingOptions } from './locked.ts';

export interface ForgetOptions extends LockingOptions {
  /** prune afterwards, with these options */
  prune?: Omit<PruneOptions, 'signal'>;
}

/** Removes the snapshot files `ids` (already gone is success); the prune's result when one was asked for. */
export function forget(repo: Repository, ids: ID[], opts: ForgetOptions = {}): Promise<PruneResult | undefined> {
  return underLock(repo, true, opts, async (signal) => {
    await forgetSnapshots(repo, ids);
    signal.throwIfAborted();
    return opts.prune ? pruneLocked(repo, { ...opts.prune, signal }) : undefined;
  });
}
