// One maintenance task on one repository: open it (a namespace without a repository has nothing to maintain),
// remove locks of holders that are gone, then prune or check under the repository's exclusive lock. A repository
// another holder keeps locked is skipped with the reason ("a backup or restore is in progress"), never waited for
// past the lock wait: the next scheduled run tries again, and the backup or restore is never disturbed.
//
// check takes the exclusive lock too, as restic's does (src/engine/operations/check.ts says why). A check skipped for
// a backup costs a day's delay; a false alarm (or a real fault blamed on a backup) costs trust.
import type { MaintenanceRun, MaintenanceTask } from '../../shared/api/types.ts';
import { LockConflictError, NoRepositoryError } from '../../engine/operations/errors.ts';
import { openRepository, type Repository } from '../../engine/operations/open.ts';
import type { listFolders } from '../../engine/operations/storage.ts';
import { liveLocks, unlock } from '../../engine/operations/unlock.ts';
import type { RepositoryAccess } from '../../shared/location/access.ts';
import { check } from '../../engine/operations/check.ts';
import { prune } from '../../engine/operations/prune.ts';
import { rfc3339 } from '../../shared/kube/conditions.ts';
import type { StepContext } from '../context.ts';
import { removeDeadStepLocks } from '../stale-locks.ts';

/**
 * What maintenance needs of a step's context: it works on a storage location, not on one resource. `listFolders`
 * replaces the bucket listing that finds the location's repositories (tests list in-memory buckets).
 */
export type MaintenanceContext = Omit<StepContext, 'step' | 'sweep'> & { listFolders?: typeof listFolders };

export interface TaskOptions {
  task: MaintenanceTask;
  /** check-data: the fraction of packs to read, (0, 1] */
  readDataFraction: number;
}

/** Errors quoted in a run's message; the rest are counted. */
const quotedErrors = 3;

/** The run's record, or undefined when the namespace has no repository at this location. */
export async function maintainRepository(
  ctx: MaintenanceContext,
  access: RepositoryAccess,
  opts: TaskOptions,
): Promise<MaintenanceRun | undefined> {
  const started = ctx.now();
  const backend = ctx.engine.openBackend(access.location, access.open);
  try {
    let repo: Repository;
    try {
      repo = await openRepository(backend, access.password);
    } catch (err) {
      if (err instanceof NoRepositoryError) return undefined;
      throw err;
    }
    const run = (fields: Omit<MaintenanceRun, 'task' | 'startTime' | 'durationSeconds'>): MaintenanceRun => ({
      task: opts.task,
      startTime: rfc3339(started),
      durationSeconds: (ctx.now().getTime() - started.getTime()) / 1000,
      ...(ctx.settings.jobName ? { job: ctx.settings.jobName } : {}),
      ...fields,
    });
    let staleLocksRemoved = 0;
    try {
      staleLocksRemoved = await clearStaleLocks(ctx, repo);
      const done = opts.task === 'prune' ? await pruneTask(ctx, repo) : await checkTask(ctx, repo, opts);
      return run({ ...done, staleLocksRemoved });
    } catch (err) {
      if (ctx.signal.aborted) throw err;
      if (err instanceof LockConflictError)
        return run({ outcome: 'Skipped', staleLocksRemoved, message: await lockedReason(repo, err, ctx.now()) });
      return run({ outcome: 'Failed', staleLocksRemoved, message: `${opts.task} failed: ${(err as Error).message}` });
    }
  } finally {
    await backend.close();
  }
}

type TaskResult = Omit<MaintenanceRun, 'task' | 'startTime' | 'durationSeconds'>;

async function pruneTask(ctx: MaintenanceContext, repo: Repository): Promise<TaskResult> {
  const result = await prune(repo, { signal: ctx.signal, lockWaitMs: ctx.settings.lockWaitMs });
  const filesRetained = result.retained.length;
  const freed =
    result.packsDeleted === 0
      ? 'Nothing to free.'
      : `Deleted ${result.packsDeleted} pack(s) (${result.packsWritten} written by repacking), freeing ${result.bytesFreed} bytes.`;
  const message = filesRetained
    ? `${freed} ${filesRetained} file(s) stay while S3 Object Lock retains them; a later prune frees them.`
    : freed;
  return {
    outcome: 'Succeeded',
    bytesFreed: result.bytesFreed,
    packsDeleted: result.packsDeleted,
    ...(filesRetained ? { filesRetained } : {}),
    message,
  };
}

async function checkTask(ctx: MaintenanceContext, repo: Repository, opts: TaskOptions): Promise<TaskResult> {
  const readData = opts.task === 'check-data';
  const result = await check(repo, {
    readData,
    readDataSubset: opts.readDataFraction,
    signal: ctx.signal,
    lockWaitMs: ctx.settings.lockWaitMs,
  });
  const read = readData ? `, read ${result.packsRead} pack(s) back` : '';
  const summary = `${result.snapshots} snapshot(s), ${result.trees} tree(s)${read}`;
  if (result.errors.length === 0) return { outcome: 'Succeeded', errorsFound: 0, message: `No errors in ${summary}.` };
  const quoted = result.errors.slice(0, quotedErrors).join('; ');
  const more = result.errors.length > quotedErrors ? ` and ${result.errors.length - quotedErrors} more` : '';
  return {
    outcome: 'Failed',
    errorsFound: result.errors.length,
    message: `${result.errors.length} error(s) in ${summary}: ${quoted}${more}.`,
  };
}

/** Why the lock could not be taken, from the live locks as they are now. */
async function lockedReason(repo: Repository, err: LockConflictError, now: Date): Promise<string> {
  const live = await liveLocks(repo, now).catch(() => []);
  const shared = live.find((l) => !l.exclusive);
  if (shared)
    return `Skipped: a backup or restore is in progress (a shared lock held by ${shared.hostname} since ${shared.time.toISOString()}); the next scheduled run tries again.`;
  const exclusive = live.find((l) => l.exclusive);
  if (exclusive)
    return `Skipped: another maintenance run holds the repository's exclusive lock (${exclusive.hostname} since ${exclusive.time.toISOString()}); the next scheduled run tries again.`;
  return `Skipped: ${err.message}; the next scheduled run tries again.`;
}

/**
 * Removes the locks of step pods that are gone (a Job killed while it held the lock) and those the engine calls
 * stale (not refreshed for 30 minutes): `ferry repo unlock` done before every run.
 */
async function clearStaleLocks(ctx: MaintenanceContext, repo: Repository): Promise<number> {
  const { dead, stale } = await unlock(repo, {
    now: ctx.now(),
    clearDeadLocks: (store) => removeDeadStepLocks(ctx.kube, ctx.ferryNamespace, store, ctx.log),
  });
  for (const r of stale) ctx.log.info('removed a stale repository lock', { lock: r.id.slice(0, 8), reason: r.reason });
  return dead.length + stale.length;
}
