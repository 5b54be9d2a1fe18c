// Forgetting snapshots, and with `prune` freeing their data, under one exclusive lock (restic's forget takes it
// too): a retry after a conflict finds the snapshots still there and does both, never a forget without its prune.
// Which snapshots go is decided from the listing made under that lock, so a backup that saved its snapshot a moment
// before is seen, and an id prefix resolves among the snapshots that are really there.
import type { ID } from '../ids/id.ts';
import { pruneLocked, type PruneOptions, type PruneResult } from '../prune/prune.ts';
import type { Repository } from '../repository/repository.ts';
import type { Retained } from '../repository/remove-unlocked.ts';
import { forgetSnapshots, listSnapshots } from '../repository/snapshots.ts';
import type { SnapshotEntry } from '../snapshot/select.ts';
import { underLock, type LockingOptions } from './locked.ts';

export interface ForgetOptions extends LockingOptions {
  /** prune afterwards, with these options */
  prune?: Omit<PruneOptions, 'signal'>;
}

export interface ForgetResult {
  /** the snapshots removed (one already gone counts as removed) */
  removed: ID[];
  /** snapshots chosen but kept: S3 Object Lock retains them until the date given; a later forget removes them */
  retained: Retained[];
  /** the prune's result, when one was asked for and there was something to forget */
  pruned?: PruneResult;
}

/** The snapshots to forget: ids, or chosen from the repository's snapshots as listed under the lock. */
export type ForgetChoice = ID[] | ((snapshots: SnapshotEntry[]) => ID[]);

export async function forget(repo: Repository, choice: ForgetChoice, opts: ForgetOptions = {}): Promise<ForgetResult> {
  const choose = async (signal: AbortSignal): Promise<ID[]> =>
    typeof choice === 'function' ? choice(await listSnapshots(repo, signal)) : choice;
  // a choice that may come out empty is looked at under a shared lock first: nothing to forget never waits for the
  // backups and restores running beside it (a canceled backup that saved nothing, a failed one being deleted)
  if (typeof choice === 'function' && (await underLock(repo, false, opts, choose)).length === 0)
    return { removed: [], retained: [] };
  return underLock(repo, true, opts, async (signal) => {
    const chosen = await choose(signal);
    if (chosen.length === 0) return { removed: chosen, retained: [] };
    const retained = await forgetSnapshots(repo, chosen);
    const removed = chosen.filter((id) => !retained.some((r) => r.name === id));
    signal.throwIfAborted();
    return { removed, retained, pruned: opts.prune ? await pruneLocked(repo, { ...opts.prune, signal }) : undefined };
  });
}
