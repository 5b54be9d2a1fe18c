// Removing the locks of holders that are gone, and telling who holds the repository now: `ferry repo unlock`, and
// what maintenance does before its work and says when it skips. No lock is taken for this, as restic's unlock takes
// none: a lock removed here is one whose holder no longer runs, so no one's work is left unprotected.
import {
  decodeLock,
  removeStaleLocks,
  staleReason,
  type LockInfo,
  type LockStore,
  type RemovedLock,
} from '../lock/lock.ts';
import { lockStore } from '../repository/lock-store.ts';
import type { Repository } from '../repository/repository.ts';

export { removeLocksWhere, type LockStore, type RemovedLock } from '../lock/lock.ts';

export interface UnlockOptions {
  /** the time staleness is judged at (tests move it) */
  now?: Date;
  /** removes the locks the caller knows are dead (a step pod that ended) before the stale ones are judged */
  clearDeadLocks?: (store: LockStore) => Promise<RemovedLock[]>;
}

/** The locks removed: those `clearDeadLocks` found dead, and those stale by the engine's rule (30 minutes, dead pid). */
export async function unlock(
  repo: Repository,
  opts: UnlockOptions = {},
): Promise<{ dead: RemovedLock[]; stale: RemovedLock[] }> {
  const store = lockStore(repo);
  const dead = (await opts.clearDeadLocks?.(store)) ?? [];
  return { dead, stale: await removeStaleLocks(store, opts.now) };
}

/** The locks held now by holders that are not stale. */
export async function liveLocks(repo: Repository, now = new Date()): Promise<LockInfo[]> {
  const store = lockStore(repo);
  const live: LockInfo[] = [];
  for await (const id of store.list()) {
    try {
      const info = decodeLock(await store.load(id));
      if (!staleReason(info, now)) live.push(info);
    } catch (err) {
      if (!store.isNotExist(err)) throw err;
    }
  }
  return live;
}
