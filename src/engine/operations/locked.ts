// The lock every repository operation runs under. The operations in this folder (backup, restore, check, forget,
// prune, snapshots, key; copy holds two, its source's and its destination's) are the engine's front door: each takes
// the lock its work needs, as restic does (shared to add or read data, exclusive to remove any or to judge the
// whole), keeps it refreshed while it runs, stops when it is lost, and removes it at the end, whether the work
// succeeded, failed or was aborted. Callers (the CLI, the steps) never take a lock themselves, so none can forget one;
// test/unit/architecture/boundaries.test.ts keeps them from importing anything of the engine but this folder.
import { Lock, type LockStore } from '../lock/lock.ts';
import { lockStore } from '../repository/lock-store.ts';
import type { Repository } from '../repository/repository.ts';

export interface LockingOptions {
  signal?: AbortSignal;
  /** how long to wait while another holder's lock conflicts (default: not at all) */
  lockWaitMs?: number;
  /** told, with the holder, when another holder makes the operation wait */
  onLockWait?: (message: string) => void;
  /** removes locks the caller knows are dead (a step pod that ended), just before the lock is taken */
  clearDeadLocks?: (store: LockStore) => Promise<unknown>;
  /** how often the lock is refreshed (tests shorten it) */
  lockRefreshMs?: number;
}

/** Runs `work` under the repository's lock; `work`'s signal also aborts when the lock is lost. */
export async function underLock<T>(
  repo: Repository,
  exclusive: boolean,
  opts: LockingOptions,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const store = lockStore(repo);
  await opts.clearDeadLocks?.(store);
  const lock = await Lock.acquire(store, {
    exclusive,
    waitMs: opts.lockWaitMs,
    signal: opts.signal,
    onWait: opts.onLockWait,
    refreshEveryMs: opts.lockRefreshMs,
  });
  try {
    return await work(opts.signal ? AbortSignal.any([opts.signal, lock.signal]) : lock.signal);
  } finally {
    await lock.release();
  }
}
