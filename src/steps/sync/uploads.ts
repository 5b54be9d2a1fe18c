// Making one namespace's DataUploads match the backups its repository holds in a synced location: a DataUpload per
// backup, marked as synced from the location and Completed with the backup's snapshot (so a DataDownload restores
// it as it would any backup); a DataUpload of that name the sync did not make is left alone; a synced one whose
// snapshot is no longer in the repository is deleted (its delete step finds nothing left to forget).
import { finalizerName } from '../../shared/api/phases.ts';
import type { DataUpload, DataUploadStatus } from '../../shared/api/types.ts';
import { apiVersion } from '../../shared/api/types.ts';
import { rfc3339 } from '../../shared/kube/conditions.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { updateStatus } from '../../shared/kube/status.ts';
import { syncedFrom, syncedFromAnnotation, syncedLabel } from '../../shared/location/synced.ts';
import type { StepEnvironment } from '../context.ts';
import type { FoundBackup } from './found.ts';

type Upload = DataUpload & KubeObject;

export interface NamespaceSync {
  created: number;
  deleted: number;
  /** backups whose DataUpload name another DataUpload holds */
  leftAlone: string[];
}

export function syncedStatus(location: string, b: FoundBackup): DataUploadStatus {
  const at = rfc3339(b.time);
  return {
    phase: 'Completed',
    snapshotID: b.snapshotID,
    startTimestamp: at,
    completionTimestamp: at,
    volumeMode: b.volumeMode,
    stats: b.stats,
    progress: { bytesDone: b.stats.bytes, totalBytes: b.stats.bytes, percent: 100 },
    message: `Synced from BackupStorageLocation ${location}: snapshot ${b.snapshotID.slice(0, 8)} of PVC ${b.pvc}.`,
  };
}

function syncedUpload(location: string, namespace: string, b: FoundBackup): Upload {
  return {
    apiVersion,
    kind: 'DataUpload',
    metadata: {
      name: b.name,
      namespace,
      annotations: { [syncedFromAnnotation]: location },
      labels: { [syncedLabel]: 'true' },
      // deleting it forgets its snapshot in the location, as Velero does for a synced backup
      finalizers: [finalizerName],
    },
    spec: { sourcePVC: b.pvc, backupStorageLocation: location },
  };
}

async function complete(ctx: StepEnvironment, location: string, du: Upload, b: FoundBackup): Promise<void> {
  await updateStatus(ctx.kube, du, (fresh) => {
    if (fresh.status?.phase === 'Completed') return false;
    fresh.status = syncedStatus(location, b);
  });
}

/**
 * `backups`: what the repository holds now; `snapshotIDs`: every snapshot in it (a synced DataUpload whose snapshot
 * is among them stays, whatever its tags say now).
 */
export async function syncNamespace(
  ctx: StepEnvironment,
  location: string,
  namespace: string,
  backups: readonly FoundBackup[],
  snapshotIDs: ReadonlySet<string>,
): Promise<NamespaceSync> {
  const result: NamespaceSync = { created: 0, deleted: 0, leftAlone: [] };
  const existing = new Map(
    (await ctx.kube.list<Upload>('DataUpload', { namespace })).map((du) => [du.metadata.name, du]),
  );
  for (const b of backups) {
    const have = existing.get(b.name);
    if (have && syncedFrom(have) !== location) {
      result.leftAlone.push(`${namespace}/${b.name}`);
      continue;
    }
    if (have) {
      // made by a run that stopped before its status write
      await complete(ctx, location, have, b);
      continue;
    }
    let made: Upload;
    try {
      made = await ctx.kube.create(syncedUpload(location, namespace, b));
    } catch (err) {
      // someone took the name meanwhile: the next run sees whose it is
      if (isAlreadyExists(err)) continue;
      throw err;
    }
    await complete(ctx, location, made, b);
    result.created++;
  }
  for (const du of existing.values()) {
    if (syncedFrom(du) !== location || du.metadata.deletionTimestamp) continue;
    const id = du.status?.snapshotID;
    const stillThere = id ? snapshotIDs.has(id) : backups.some((b) => b.name === du.metadata.name);
    if (stillThere) continue;
    if (await ctx.kube.delete({ kind: 'DataUpload', namespace, name: du.metadata.name }, { uid: du.metadata.uid }))
      result.deleted++;
  }
  return result;
}
