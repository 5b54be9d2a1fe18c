// Names and labels of what an AppBackup or AppRestore makes, deterministic so a step run again finds what an earlier
// run made: one DataUpload (or DataDownload) per volume, the group snapshot, and the label a group snapshot selects
// its claims by.
import { fitted, labelValue, maxObjectName } from '../kube/names.ts';

export const appLabels = {
  /** on an AppBackup's DataUploads and snapshots: the AppBackup's name (`labelValue`) */
  appBackup: 'ferry.dev/app-backup',
  /** on an AppRestore's DataDownloads: the AppRestore's name (`labelValue`) */
  appRestore: 'ferry.dev/app-restore',
} as const;

/** The hook name spec.freeze's fsfreeze runs go by in status.hooks; no hook of the spec may take it. */
export const freezeHook = 'fsfreeze';

/** The finalizer an AppBackup holds while it is not finished: post hooks may be owed and DataUploads to cancel. */
export const appBackupFinalizer = 'ferry.dev/app-backup';

/** `<parent>-<pvc>`, within an object name's 253 characters: the DataUpload or DataDownload of one volume. */
export function volumeObjectName(parent: string, pvc: string): string {
  return fitted(`${parent}-${pvc}`, maxObjectName);
}

/** The VolumeGroupSnapshot of an AppBackup, and the per-volume snapshots when there is no group snapshot. */
export function groupSnapshotName(appBackupUID: string): string {
  return `ferry-app-${appBackupUID}`;
}

export function volumeSnapshotName(appBackupUID: string, pvc: string): string {
  return fitted(`ferry-app-${appBackupUID}-${pvc}`, maxObjectName);
}

/**
 * The label key the group snapshot selects claims by, set on each claim for the snapshot and removed after it: one
 * key per AppBackup, so two backups of overlapping claims never take each other's.
 */
export function groupMemberLabel(appBackupUID: string): string {
  return `group.ferry.dev/${appBackupUID}`;
}

export function appBackupSelector(appBackup: string): string {
  return `${appLabels.appBackup}=${labelValue(appBackup)}`;
}

export function appRestoreSelector(appRestore: string): string {
  return `${appLabels.appRestore}=${labelValue(appRestore)}`;
}
