// Opening the repository a resource uses (its location, its source namespace), creating it on a first backup, and
// how a step waits for its locks.
import type { DataDownload, FerryResource } from '../../shared/api/types.ts';
import { repositoryAccess, type RepositoryAccess } from '../../shared/location/access.ts';
import type { OpenOptions } from '../../engine/operations/storage.ts';
import type { LockingOptions } from '../../engine/operations/locked.ts';
import { openOrInit, type Repository } from '../../engine/operations/open.ts';
import type { StepContext } from '../context.ts';
import { removeDeadStepLocks } from '../stale-locks.ts';

/** The namespace whose repository holds the resource's data: a DataDownload may read another namespace's. */
export function repositoryNamespace(r: FerryResource): string {
  if (r.kind === 'DataUpload') return r.metadata.namespace!;
  const dd: DataDownload = r;
  return dd.spec.sourceNamespace ?? dd.spec.source.dataUpload?.namespace ?? dd.metadata.namespace!;
}

export interface OpenedRepository {
  repo: Repository;
  location: string;
  close(): Promise<void>;
}

/**
 * Opens the repository; `create` makes it when there is none yet (two first backups racing both succeed). A
 * restore reads (a location in recovery mode serves it); a backup or a delete writes.
 */
export async function openRepository(ctx: StepContext, r: FerryResource, create: boolean): Promise<OpenedRepository> {
  const access = await repositoryAccess(
    ctx.kube,
    ctx.ferryNamespace,
    r.spec.backupStorageLocation,
    repositoryNamespace(r),
    r.kind === 'DataDownload' ? 'read' : 'write',
  );
  const opened = await openWithAccess(ctx, access, access.open, create);
  ctx.log.info('opened the repository', { location: access.location });
  return opened;
}

/** The repository `access` names, opened with `open` (its S3 settings, perhaps an object-lock policy). */
export async function openWithAccess(
  ctx: Pick<StepContext, 'engine'>,
  access: RepositoryAccess,
  open: OpenOptions,
  create: boolean,
): Promise<OpenedRepository> {
  const backend = ctx.engine.openBackend(access.location, open);
  const close = async (): Promise<void> => {
    await backend.close();
    access.dispose();
  };
  try {
    const repo = await openOrInit(
      backend,
      access.password,
      create ? { ...ctx.engine.init, ...access.identity } : undefined,
    );
    return { repo, location: access.location, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * How a step's repository operations lock: they wait the step's lock wait for other holders, and first remove the
 * locks of step pods that are gone (a delete step killed mid-prune leaves its exclusive lock: no one waits 30 minutes
 * for it).
 */
export function stepLocking(
  ctx: Pick<StepContext, 'kube' | 'ferryNamespace' | 'settings' | 'log'>,
  signal: AbortSignal,
): LockingOptions {
  return {
    signal,
    lockWaitMs: ctx.settings.lockWaitMs,
    onLockWait: (message) => ctx.log.info(`waiting: ${message}`),
    clearDeadLocks: (store) => removeDeadStepLocks(ctx.kube, ctx.ferryNamespace, store, ctx.log),
  };
}
