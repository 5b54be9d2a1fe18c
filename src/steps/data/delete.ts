// delete (a DataUpload being deleted, in a terminal phase, holding ferry's finalizer): forget its repository
// snapshot, free the data no other snapshot uses (prune, under the repository's exclusive lock), then remove the
// finalizer so Kubernetes can delete it. A failure leaves the finalizer and says why in status; the sweep tries
// again later. So does a restore still reading the backup, and a mirror of a Velero backup that still exists
// (src/shared/velero/backup-exists.ts): this step is the one place every deletion passes
// (retention, expiry, a user's kubectl delete), and it sees DataDownloads in every namespace.
import type { BackupStorageLocation, DataDownload, DataUpload, FerryResource } from '../../shared/api/types.ts';
import { rfc3339, setCondition } from '../../shared/kube/conditions.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { forget } from '../../engine/operations/forget.ts';
import type { SnapshotEntry } from '../../engine/operations/snapshots.ts';
import { NoRepositoryError } from '../../engine/operations/errors.ts';
import { readerOf } from '../../shared/retention/plan.ts';
import type { Outcome, StepContext } from '../context.ts';
import { dataStep } from './description.ts';
import { removeFinalizer } from './finalizer.ts';
import { openRepository, stepLocking } from './repository.ts';
import { snapshotsOf } from './tags.ts';
import { veleroBackupHolds } from '../../shared/velero/backup-exists.ts';
import { isMirror } from '../../shared/velero/mirror.ts';
import { syncedFrom } from '../../shared/location/synced.ts';
import { releaseContent } from './retained-snapshot.ts';
import { event, writeStatus } from './transition.ts';

export async function deleteData(ctx: StepContext, r: FerryResource): Promise<Outcome> {
  if (r.kind !== 'DataUpload')
    return { outcome: 'Skipped', reason: 'only a DataUpload has repository data to delete.' };
  try {
    // the CSI snapshot kept as the next backup's base serves no one once its backup is deleted
    const kept = r.status?.changeTracking?.retainedContent;
    if (kept) await releaseContent(ctx, kept);
    const location = await ctx.kube.get<BackupStorageLocation & KubeObject>({
      kind: 'BackupStorageLocation',
      namespace: ctx.ferryNamespace,
      name: r.spec.backupStorageLocation,
    });
    if (!location) return await releaseWithoutLocation(ctx, r);
    if (location.spec.recoverVersions && syncedFrom(r)) return await releaseReadOnly(ctx, r);
    const reader = readerOf(r, await ctx.kube.list<DataDownload & KubeObject>('DataDownload'));
    if (reader)
      return await holdFinalizer(
        ctx,
        r,
        `DataDownload ${reader.metadata.namespace}/${reader.metadata.name} is reading this backup`,
        'RestoreReading',
      );
    // the data of a Velero backup goes only with the backup: a mirror deleted by hand keeps it
    const held = isMirror(r) ? await veleroBackupHolds(ctx.kube, ctx.ferryNamespace, r, location) : undefined;
    if (held) return await holdFinalizer(ctx, r, held, 'VeleroBackupExists');
    const freed = await freeRepositoryData(ctx, r);
    await removeFinalizer(ctx, r);
    const deleted =
      freed.forgotten === 0
        ? 'No repository snapshot to delete'
        : `Deleted repository snapshot(s) ${freed.ids.join(', ')} and freed ${freed.bytesFreed} bytes`;
    // a snapshot S3 Object Lock still retains cannot go: the location's maintenance prune frees it once retention ends
    const retained = freed.retained.length
      ? `; snapshot(s) ${freed.retained.join(', ')} stay until their S3 Object Lock retention ends`
      : '';
    const note = `${deleted}${retained}; finalizer removed.`;
    ctx.log.info(note);
    await event(ctx, r, { type: 'Normal', reason: 'RepositoryDataDeleted', note });
    return {
      outcome: 'Advanced',
      reason: note,
      counters: { snapshotsForgotten: freed.forgotten, packsDeleted: freed.packsDeleted, bytesFreed: freed.bytesFreed },
    };
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    const message = `Could not delete the repository data: ${(err as Error).message} The finalizer stays; the sweep tries again.`;
    await recordDeleteFailure(ctx, r, message).catch((e: Error) =>
      ctx.log.warn('could not record the failure in status', { error: e.message }),
    );
    throw err;
  }
}

/**
 * With its storage location gone ferry cannot reach the data any more; holding the finalizer would only block the
 * namespace's deletion for ever. The data stays in the bucket, and the Event says so.
 */
async function releaseWithoutLocation(ctx: StepContext, du: DataUpload): Promise<Outcome> {
  await removeFinalizer(ctx, du);
  const note = `BackupStorageLocation ${du.spec.backupStorageLocation} no longer exists, so snapshot ${du.status?.snapshotID?.slice(0, 8) ?? '(none)'} stays in its bucket; finalizer removed.`;
  ctx.log.warn(note);
  await event(ctx, du, { type: 'Warning', reason: 'RepositoryDataKept', note });
  return { outcome: 'Advanced', reason: note };
}

/**
 * A backup synced from a location this cluster only reads (spec.recoverVersions): its snapshot is the other
 * cluster's to forget, and nothing may be written there, so deleting it here leaves the data as it is.
 */
async function releaseReadOnly(ctx: StepContext, du: DataUpload): Promise<Outcome> {
  await removeFinalizer(ctx, du);
  const note = `BackupStorageLocation ${du.spec.backupStorageLocation} is read only (spec.recoverVersions), so synced snapshot ${du.status?.snapshotID?.slice(0, 8) ?? '(none)'} stays in its bucket; finalizer removed.`;
  ctx.log.info(note);
  await event(ctx, du, { type: 'Normal', reason: 'RepositoryDataKept', note });
  return { outcome: 'Advanced', reason: note };
}

/** The finalizer stays and status says what holds the data; the sweep runs the step again later (delete retries for
 * ever). */
async function holdFinalizer(ctx: StepContext, du: DataUpload, why: string, reason: string): Promise<Outcome> {
  const message = `Waiting: ${why}; the finalizer stays and the sweep tries again.`;
  ctx.log.info(message);
  const repeated = du.status?.message === message;
  await writeStatus(ctx, du, (s) => {
    s.message = message;
    s.conditions = setCondition(
      s.conditions,
      { type: 'RepositoryDataDeleted', status: 'False', reason, message },
      ctx.now(),
    );
  });
  // one Event per cause, not one per sweep
  if (!repeated) await event(ctx, du, { type: 'Normal', reason: 'DeleteWaiting', note: message });
  return { outcome: 'Waiting', reason: message };
}

interface Freed {
  forgotten: number;
  ids: string[];
  /** snapshots Object Lock kept (short ids) */
  retained: string[];
  packsDeleted: number;
  bytesFreed: number;
}

async function freeRepositoryData(ctx: StepContext, du: DataUpload): Promise<Freed> {
  let opened;
  try {
    opened = await openRepository(ctx, du, false);
  } catch (err) {
    // no repository, no data: a backup that never moved any
    if (err instanceof NoRepositoryError)
      return { forgotten: 0, ids: [], retained: [], packsDeleted: 0, bytesFreed: 0 };
    throw err;
  }
  try {
    const { repo } = opened;
    // the recorded snapshot, and any other this DataUpload saved (a run that crashed before recording it), found and
    // forgotten and the data freed under one exclusive lock: restores and backups of this namespace's other PVCs
    // finish first
    const mine = (snapshots: SnapshotEntry[]): string[] => {
      const ids = new Set(snapshotsOf(snapshots, du).map((e) => e.id));
      if (du.status?.snapshotID) ids.add(du.status.snapshotID);
      return [...ids];
    };
    const { removed, retained, pruned } = await forget(repo, mine, { ...stepLocking(ctx, ctx.signal), prune: {} });
    return {
      forgotten: removed.length,
      ids: removed.map((id) => id.slice(0, 8)),
      retained: retained.map((r) => r.name.slice(0, 8)),
      packsDeleted: pruned?.packsDeleted ?? 0,
      bytesFreed: pruned?.bytesFreed ?? 0,
    };
  } finally {
    await opened.close();
  }
}

async function recordDeleteFailure(ctx: StepContext, r: DataUpload, message: string): Promise<void> {
  const now = ctx.now();
  await writeStatus(ctx, r, (s) => {
    s.message = message;
    s.conditions = setCondition(
      s.conditions,
      { type: 'RepositoryDataDeleted', status: 'False', reason: 'DeleteFailed', message },
      now,
    );
    s.steps = {
      ...s.steps,
      delete: {
        ...s.steps?.delete,
        attempts: Math.max(s.steps?.delete?.attempts ?? 1, ctx.settings.attempt ?? 1),
        startTime: rfc3339(ctx.startedAt),
        endTime: rfc3339(now),
        outcome: 'Failed',
        message,
      },
    };
  });
  await event(ctx, r, { type: 'Warning', reason: 'DeleteFailed', note: message });
}

export const deleteStep = dataStep('delete', deleteData);
