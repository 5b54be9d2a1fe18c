// The data of an AppBackup moves as one DataUpload per volume, each owned by the AppBackup (deleting it frees their
// data) and reading the snapshot taken between the hooks. This file makes them, cancels them, and folds what they
// show into the AppBackup's volumes, totals and phase: a failed volume makes UploadingPartialFailure at once, and
// only every volume Completed makes Completed.
import type { AppBackupPhase, AppBackupStatus, AppBackupVolume } from '../../shared/api/app.ts';
import { terminalPhases } from '../../shared/api/phases.ts';
import { apiVersion, type DataUpload } from '../../shared/api/types.ts';
import { appBackupSelector, appLabels, volumeObjectName } from '../../shared/app/names.ts';
import { isAlreadyExists, KubeError } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { labelValue } from '../../shared/kube/names.ts';
import { bounded, type AppBackupContext, type AppBackupObject } from './context.ts';
import { notOwned, ownedBy, ownerOf } from './owner.ts';

type Upload = DataUpload & KubeObject;

/** A DataUpload of this name exists and belongs to someone else. */
export class ForeignUpload extends Error {}

function uploadFor(ab: AppBackupObject, v: AppBackupVolume, deleteWhenDone: boolean): Upload {
  return {
    apiVersion,
    kind: 'DataUpload',
    metadata: {
      name: volumeObjectName(ab.metadata.name, v.pvc),
      namespace: ab.metadata.namespace,
      labels: { [appLabels.appBackup]: labelValue(ab.metadata.name) },
      ownerReferences: [ownerOf(ab)],
    },
    spec: {
      sourcePVC: v.pvc,
      backupStorageLocation: ab.spec.backupStorageLocation,
      csiSnapshot: { volumeSnapshot: v.volumeSnapshot, deleteWhenDone },
      ...(ab.spec.operationTimeout ? { operationTimeout: ab.spec.operationTimeout } : {}),
      tags: { ...ab.spec.tags, 'app-backup': ab.metadata.name },
    },
  };
}

/**
 * One DataUpload per volume (an existing one of this AppBackup counts as made); the volumes as they are then.
 * A volume the dispatcher refuses fails alone; a foreign DataUpload of the name throws ForeignUpload.
 */
export async function createUploads(ctx: AppBackupContext, ab: AppBackupObject): Promise<AppBackupVolume[]> {
  const perVolume = ab.status?.consistency === 'PerVolume';
  const out: AppBackupVolume[] = [];
  for (const v of ab.status?.volumes ?? []) {
    const du = uploadFor(ab, v, perVolume);
    try {
      await ctx.kube.create(du);
      out.push({ ...v, dataUpload: du.metadata.name, phase: 'New' });
    } catch (err) {
      if (isAlreadyExists(err)) {
        const found = await ctx.kube.get<Upload>({
          kind: 'DataUpload',
          namespace: du.metadata.namespace,
          name: du.metadata.name,
        });
        if (found && !ownedBy(found, { kind: 'AppBackup', uid: ab.metadata.uid }))
          throw new ForeignUpload(notOwned(found, ab));
        out.push({ ...v, dataUpload: du.metadata.name });
      } else if (err instanceof KubeError && [400, 403, 422].includes(err.status))
        out.push({ ...v, phase: 'Failed', message: bounded(`DataUpload refused: ${err.message}`) });
      else throw err;
    }
  }
  return out;
}

async function uploadsOf(ctx: AppBackupContext, ab: AppBackupObject): Promise<Map<string, Upload>> {
  const list = await ctx.kube.list<Upload>('DataUpload', {
    namespace: ab.metadata.namespace,
    labelSelector: appBackupSelector(ab.metadata.name),
  });
  return new Map(
    list.filter((du) => ownedBy(du, { kind: 'AppBackup', uid: ab.metadata.uid })).map((du) => [du.metadata.name, du]),
  );
}

/** The volumes with what their DataUploads show now. */
export async function observeUploads(ctx: AppBackupContext, ab: AppBackupObject): Promise<AppBackupVolume[]> {
  const uploads = await uploadsOf(ctx, ab);
  return (ab.status?.volumes ?? []).map((v): AppBackupVolume => {
    if (!v.dataUpload || isDone(v)) return v;
    const du = uploads.get(v.dataUpload);
    if (!du) return { ...v, phase: 'Failed', message: `DataUpload ${v.dataUpload} was deleted before it ended` };
    const s = du.status;
    const seen: AppBackupVolume = { ...v, phase: s?.phase ?? 'New' };
    if (s?.progress) {
      seen.bytesDone = s.progress.bytesDone;
      seen.totalBytes = s.progress.totalBytes;
    }
    if (s?.snapshotID) seen.snapshotID = s.snapshotID;
    if (s?.message && s.phase !== 'Completed') seen.message = bounded(s.message);
    else delete seen.message;
    return seen;
  });
}

/** spec.cancel on every DataUpload of the AppBackup not yet finished. */
export async function cancelUploads(ctx: AppBackupContext, ab: AppBackupObject): Promise<void> {
  for (const du of (await uploadsOf(ctx, ab)).values()) {
    if (du.spec.cancel || terminalPhases.includes(du.status?.phase ?? 'New')) continue;
    await ctx.kube.patch(
      { kind: 'DataUpload', namespace: du.metadata.namespace, name: du.metadata.name },
      {
        spec: { cancel: true },
      },
    );
  }
}

export function isDone(v: AppBackupVolume): boolean {
  return terminalPhases.includes(v.phase ?? 'New');
}

/** Volumes done/total and the byte totals, as kubectl's columns show them. */
export function totals(status: AppBackupStatus, volumes: AppBackupVolume[]): void {
  status.volumes = volumes;
  status.volumesDone = `${volumes.filter((v) => v.phase === 'Completed').length}/${volumes.length}`;
  status.bytesDone = volumes.reduce((n, v) => n + (v.bytesDone ?? 0), 0);
  status.totalBytes = volumes.reduce((n, v) => n + (v.totalBytes ?? 0), 0);
}

/** The phase the volumes make: Uploading while all go on, at the end Completed only when every volume Completed. */
export function uploadPhase(volumes: AppBackupVolume[], postHookFailed: boolean): AppBackupPhase {
  const completed = volumes.filter((v) => v.phase === 'Completed').length;
  if (volumes.some((v) => !isDone(v)))
    return volumes.some((v) => isDone(v) && v.phase !== 'Completed') ? 'UploadingPartialFailure' : 'Uploading';
  if (completed === volumes.length && volumes.length > 0) return postHookFailed ? 'PartiallyFailed' : 'Completed';
  return completed > 0 ? 'PartiallyFailed' : 'Failed';
}
