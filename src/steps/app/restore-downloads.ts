// The DataDownloads of an AppRestore, one per volume: named volumeObjectName(restore, pvc), labelled and owned by
// the AppRestore (so deleting it deletes them). A DataDownload of that name that this AppRestore's uid does not own
// is never adopted, canceled or read: the volume fails instead, naming it.
import type { AppRestoreVolume } from '../../shared/api/app.ts';
import { terminalPhases } from '../../shared/api/phases.ts';
import { apiVersion } from '../../shared/api/types.ts';
import type { DataDownload, Phase } from '../../shared/api/types.ts';
import { appLabels, appRestoreSelector } from '../../shared/app/names.ts';
import { isAlreadyExists, isNotFound, KubeError } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { labelValue } from '../../shared/kube/names.ts';
import type { Restore, RestoreContext } from './restore-context.ts';

type Download = DataDownload & KubeObject;

/** A status message of a volume is cut here: status stays small however long a step's message is. */
const maxMessage = 1000;

export function ownedBy(obj: KubeObject, r: Restore): boolean {
  return (obj.metadata.ownerReferences ?? []).some(
    (o) => o.kind === 'AppRestore' && o.uid === r.metadata.uid && o.controller === true,
  );
}

export function isVolumeDone(v: AppRestoreVolume): boolean {
  return v.phase !== undefined && terminalPhases.includes(v.phase);
}

export interface DownloadSource {
  backupNamespace: string;
  location: string;
  dataUpload: string;
}

export function downloadFor(r: Restore, v: AppRestoreVolume, source: DownloadSource): Download {
  const namespace = r.metadata.namespace ?? '';
  return {
    apiVersion,
    kind: 'DataDownload',
    metadata: {
      name: v.dataDownload ?? '',
      namespace,
      labels: { [appLabels.appRestore]: labelValue(r.metadata.name) },
      ownerReferences: [
        { apiVersion, kind: 'AppRestore', name: r.metadata.name, uid: r.metadata.uid ?? '', controller: true },
      ],
    },
    spec: {
      targetPVC: {
        name: v.targetPVC,
        ...(r.spec.storageClassName ? { storageClassName: r.spec.storageClassName } : {}),
      },
      backupStorageLocation: source.location,
      source: { dataUpload: { name: source.dataUpload, namespace: source.backupNamespace } },
      ...(source.backupNamespace !== namespace ? { sourceNamespace: source.backupNamespace } : {}),
      ...(r.spec.operationTimeout ? { operationTimeout: r.spec.operationTimeout } : {}),
    },
  };
}

const failed = (v: AppRestoreVolume, message: string): AppRestoreVolume => ({
  ...v,
  phase: 'Failed',
  message: message.slice(0, maxMessage),
});

/**
 * Creates the DataDownload of a volume not made yet (no phase). Taken by someone else's object, or refused by
 * admission (e.g. the location's crossNamespaceRestores), the volume fails with the reason.
 */
export async function createDownload(
  ctx: RestoreContext,
  r: Restore,
  v: AppRestoreVolume,
  source: DownloadSource | undefined,
): Promise<AppRestoreVolume> {
  if (!source) return failed(v, 'the AppBackup or its volume was deleted before this DataDownload was made');
  const dd = downloadFor(r, v, source);
  try {
    await ctx.kube.create(dd);
    return { ...v, phase: 'New' };
  } catch (err) {
    if (isAlreadyExists(err)) {
      const found = await ctx.kube.get<Download>({
        kind: 'DataDownload',
        namespace: dd.metadata.namespace,
        name: dd.metadata.name,
      });
      if (found && ownedBy(found, r)) return { ...v, phase: found.status?.phase ?? 'New' };
      return failed(
        v,
        `DataDownload ${dd.metadata.name} already exists and does not belong to this AppRestore; it was not adopted`,
      );
    }
    if (err instanceof KubeError && [400, 403, 422].includes(err.status))
      return failed(v, `DataDownload ${dd.metadata.name} was refused: ${err.message}`);
    throw err;
  }
}

/** This AppRestore's DataDownloads by name: only those its uid owns. */
async function ownDownloads(ctx: RestoreContext, r: Restore): Promise<Map<string, Download>> {
  const list = await ctx.kube.list<Download>('DataDownload', {
    namespace: r.metadata.namespace,
    labelSelector: appRestoreSelector(r.metadata.name),
  });
  return new Map(list.filter((dd) => ownedBy(dd, r)).map((dd) => [dd.metadata.name, dd]));
}

/** The volumes with what their DataDownloads show now; a volume that ended keeps its end. */
export async function observeVolumes(
  ctx: RestoreContext,
  r: Restore,
  volumes: readonly AppRestoreVolume[],
): Promise<AppRestoreVolume[]> {
  const own = await ownDownloads(ctx, r);
  return volumes.map((v) => {
    if (isVolumeDone(v) || v.phase === undefined || !v.dataDownload) return v;
    const dd = own.get(v.dataDownload);
    if (!dd) return failed(v, `DataDownload ${v.dataDownload} was deleted before it ended`);
    const phase: Phase = dd.status?.phase ?? 'New';
    const progress = dd.status?.progress;
    const bytesDone = phase === 'Completed' ? (dd.status?.stats?.bytes ?? progress?.bytesDone) : progress?.bytesDone;
    const next: AppRestoreVolume = { pvc: v.pvc, targetPVC: v.targetPVC, dataDownload: v.dataDownload, phase };
    if (bytesDone !== undefined) next.bytesDone = bytesDone;
    if (progress?.totalBytes !== undefined) next.totalBytes = progress.totalBytes;
    if (phase !== 'Completed' && dd.status?.message) next.message = dd.status.message.slice(0, maxMessage);
    return next;
  });
}

/** Sets spec.cancel on every unfinished DataDownload this AppRestore owns; returns their names. */
export async function cancelDownloads(ctx: RestoreContext, r: Restore): Promise<string[]> {
  const canceled: string[] = [];
  for (const dd of (await ownDownloads(ctx, r)).values()) {
    if (terminalPhases.includes(dd.status?.phase ?? 'New') || dd.spec.cancel) continue;
    try {
      await ctx.kube.patch(
        { kind: 'DataDownload', namespace: dd.metadata.namespace, name: dd.metadata.name },
        { spec: { cancel: true } },
      );
      canceled.push(dd.metadata.name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return canceled;
}
