// Velero's side of the data mover contract (velero.io/v2alpha1 DataUpload and DataDownload, as of Velero 1.18):
// only the fields ferry reads or writes. Velero's CRDs have no status subresource, so status is written with a
// merge patch on the object itself (./sync.ts); phases are limited to the ones below, which is why ferry keeps its
// own phases on a mirror resource and shows Velero only their meaning.
import type { ObjectMeta } from '../api/types.ts';

export const veleroGroup = 'velero.io';
export const veleroApiVersion = 'velero.io/v2alpha1';

/** `spec.datamover` that hands an object to ferry; "" and "velero" belong to Velero's node-agent. */
export const ferryDataMover = 'ferry';

export type VeleroPhase =
  'New' | 'Accepted' | 'Prepared' | 'InProgress' | 'Canceling' | 'Canceled' | 'Completed' | 'Failed';

export const veleroTerminal: readonly VeleroPhase[] = ['Canceled', 'Completed', 'Failed'];

export interface VeleroProgress {
  totalBytes?: number;
  bytesDone?: number;
}

/** What ferry writes into either kind's status (never `node` or `acceptedByNode`: see mirrorStatus). */
export interface VeleroStatus {
  phase?: VeleroPhase;
  message?: string;
  startTimestamp?: string;
  completionTimestamp?: string;
  progress?: VeleroProgress;
  /** DataUpload only */
  snapshotID?: string;
  incrementalBytes?: number;
  path?: string;
  dataMoverResult?: Record<string, string>;
  node?: string;
  acceptedByNode?: string;
  acceptedTimestamp?: string;
}

export interface VeleroDataUpload {
  apiVersion: typeof veleroApiVersion;
  kind: 'DataUpload';
  metadata: ObjectMeta;
  spec: {
    snapshotType?: string;
    csiSnapshot?: { volumeSnapshot?: string; storageClass?: string; snapshotClass?: string; driver?: string };
    sourcePVC: string;
    datamover?: string;
    backupStorageLocation: string;
    sourceNamespace: string;
    dataMoverConfig?: Record<string, string>;
    cancel?: boolean;
    operationTimeout?: string;
  };
  status?: VeleroStatus;
}

export interface VeleroDataDownload {
  apiVersion: typeof veleroApiVersion;
  kind: 'DataDownload';
  metadata: ObjectMeta;
  spec: {
    targetVolume: { pvc: string; pv?: string; namespace: string };
    backupStorageLocation: string;
    datamover?: string;
    snapshotID: string;
    sourceNamespace: string;
    dataMoverConfig?: Record<string, string>;
    cancel?: boolean;
    operationTimeout?: string;
    snapshotSize?: number;
  };
  status?: VeleroStatus;
}

export type VeleroObject = VeleroDataUpload | VeleroDataDownload;

/** Labels Velero puts on its DataUploads and DataDownloads. */
export const veleroLabels = {
  backupName: 'velero.io/backup-name',
  backupUID: 'velero.io/backup-uid',
  restoreName: 'velero.io/restore-name',
} as const;

/** Velero's v1 Backup, as far as ferry reads it to tell whether a backup still exists. */
export interface VeleroBackup {
  apiVersion: 'velero.io/v1';
  kind: 'Backup';
  metadata: ObjectMeta;
  status?: { phase?: string };
}
