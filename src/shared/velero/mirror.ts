// A Velero DataUpload or DataDownload that names ferry as its data mover is done by a ferry resource of the same
// kind, its mirror, in the namespace the data belongs to (the PVC's for a backup, the target's for a restore), so
// the same steps, limits, cancel and crash-resume apply and the tenant's repository holds the data. The mirror's
// name and annotations tie it to the Velero object; only ferry's dispatcher may create a resource carrying them,
// and nobody may change them (src/dispatcher/rules.ts), so a mirror can be trusted to speak for its Velero object.
import { apiVersion } from '../api/types.ts';
import type { DataDownload, DataUpload, FerryResource } from '../api/types.ts';
import { labelValue } from '../kube/names.ts';
import { ferryDataMover, veleroLabels } from './types.ts';
import type { VeleroDataDownload, VeleroDataUpload, VeleroObject } from './types.ts';

export const mirrorAnnotations = {
  /** `<velero namespace>/<name>` of the Velero object */
  object: 'velero.ferry.dev/object',
  uid: 'velero.ferry.dev/uid',
  /** the Velero Backup whose data the mirror holds (DataUpload mirrors) */
  backup: 'velero.ferry.dev/backup',
  backupUID: 'velero.ferry.dev/backup-uid',
} as const;

/** On every mirror, so `kubectl get datauploads -A -l velero.ferry.dev/backup-name=...` finds a backup's. */
export const mirrorLabels = {
  backupName: 'velero.ferry.dev/backup-name',
  restoreName: 'velero.ferry.dev/restore-name',
} as const;

const namePrefix = 'velero-';
const maxNameLength = 253;

/** Whether the resource is a mirror of a Velero object. */
export function isMirror(r: { metadata: { annotations?: Record<string, string> } }): boolean {
  return r.metadata.annotations?.[mirrorAnnotations.uid] !== undefined;
}

/** The Velero object a mirror stands for: namespace, name and uid. */
export function mirroredObject(r: FerryResource): { namespace: string; name: string; uid: string } | undefined {
  const ref = r.metadata.annotations?.[mirrorAnnotations.object];
  const uid = r.metadata.annotations?.[mirrorAnnotations.uid];
  const slash = ref?.indexOf('/') ?? -1;
  if (!ref || !uid || slash <= 0) return undefined;
  return { namespace: ref.slice(0, slash), name: ref.slice(slash + 1), uid };
}

/** The mirror's name: fixed by the Velero object's name, so making it twice makes one. */
export function mirrorName(v: VeleroObject): string {
  return `${namePrefix}${v.metadata.name}`.slice(0, maxNameLength);
}

/** Where the mirror lives: the namespace the data belongs to. */
export function mirrorNamespace(v: VeleroObject): string {
  return v.kind === 'DataUpload' ? v.spec.sourceNamespace : v.spec.targetVolume.namespace;
}

/** Whether ferry is the data mover the Velero object asks for. */
export function asksForFerry(v: VeleroObject): boolean {
  return v.spec.datamover === ferryDataMover;
}

/**
 * The Velero Backup a DataUpload belongs to: its owner, which Velero sets. The backup-name label is only a fallback,
 * since Velero shortens a name past 63 characters there (with a hash), and ferry looks the Backup up by its name.
 */
function backupOf(v: VeleroObject): { name: string; uid: string } | undefined {
  const owner = v.metadata.ownerReferences?.find((o) => o.kind === 'Backup' && o.apiVersion.startsWith('velero.io/'));
  if (owner) return { name: owner.name, uid: owner.uid };
  const name = v.metadata.labels?.[veleroLabels.backupName];
  return name ? { name, uid: v.metadata.labels?.[veleroLabels.backupUID] ?? '' } : undefined;
}

function mirrorMetadata(v: VeleroObject): FerryResource['metadata'] {
  const annotations: Record<string, string> = {
    [mirrorAnnotations.object]: `${v.metadata.namespace}/${v.metadata.name}`,
    [mirrorAnnotations.uid]: v.metadata.uid ?? '',
  };
  const labels: Record<string, string> = {};
  const backup = backupOf(v);
  const restore = v.metadata.labels?.[veleroLabels.restoreName];
  if (v.kind === 'DataUpload' && backup) {
    annotations[mirrorAnnotations.backup] = backup.name;
    annotations[mirrorAnnotations.backupUID] = backup.uid;
    labels[mirrorLabels.backupName] = labelValue(backup.name);
  }
  if (v.kind === 'DataDownload' && restore) labels[mirrorLabels.restoreName] = labelValue(restore);
  return { name: mirrorName(v), namespace: mirrorNamespace(v), annotations, labels };
}

/** The ferry DataUpload doing a Velero DataUpload's work, storing into `location`. */
export function uploadMirror(v: VeleroDataUpload, location: string): DataUpload {
  const snapshot = v.spec.csiSnapshot ?? {};
  const backup = backupOf(v)?.name;
  return {
    apiVersion,
    kind: 'DataUpload',
    metadata: mirrorMetadata(v),
    spec: {
      sourcePVC: v.spec.sourcePVC,
      backupStorageLocation: location,
      csiSnapshot: {
        ...(snapshot.volumeSnapshot ? { volumeSnapshot: snapshot.volumeSnapshot } : {}),
        ...(snapshot.snapshotClass ? { snapshotClass: snapshot.snapshotClass } : {}),
        // Velero leaves the snapshot to its data mover: it goes with its content once the data is moved
        deleteWhenDone: true,
      },
      dataMover: ferryDataMover,
      ...(v.spec.operationTimeout ? { operationTimeout: v.spec.operationTimeout } : {}),
      ...(backup ? { tags: { 'velero-backup': backup } } : {}),
    },
  };
}

/** The ferry DataDownload doing a Velero DataDownload's work: it waits for the PVC Velero creates after it. */
export function downloadMirror(v: VeleroDataDownload, location: string): DataDownload {
  return {
    apiVersion,
    kind: 'DataDownload',
    metadata: mirrorMetadata(v),
    spec: {
      targetPVC: { name: v.spec.targetVolume.pvc, awaitClaim: true },
      backupStorageLocation: location,
      source: { snapshotID: v.spec.snapshotID },
      sourceNamespace: v.spec.sourceNamespace,
      dataMover: ferryDataMover,
      ...(v.spec.operationTimeout ? { operationTimeout: v.spec.operationTimeout } : {}),
    },
  };
}
