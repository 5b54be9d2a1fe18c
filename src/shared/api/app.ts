// Application backups (ferry.dev/v1alpha1): the volumes of one application snapshotted at one instant between
// pre and post hooks, then uploaded in the background as one DataUpload per volume; and their restore into a
// namespace. Phases follow Velero's upload-progress design: a backup is never shown usable before its data is.
// The kinds are AppBackup and AppRestore so that kubectl's `backup`/`restore` stay Velero's.
import type { Condition, LabelSelector, ObjectMeta, Phase } from './types.ts';
import { apiVersion } from './types.ts';

export type AppBackupPhase =
  | 'New'
  /** found unusable when the step looked at the cluster (a named PVC missing, no PVC selected, ...) */
  | 'FailedValidation'
  /** hooks and snapshots */
  | 'InProgress'
  /** snapshots taken; DataUploads moving the data */
  | 'Uploading'
  /** snapshots taken; some volume failed, the others still moving */
  | 'UploadingPartialFailure'
  | 'Completed'
  /** some volumes Completed (restorable), some not */
  | 'PartiallyFailed'
  | 'Failed'
  /** spec.cancel or deletion stopped it; its DataUploads were canceled */
  | 'Canceled';

export const appBackupTerminalPhases: readonly AppBackupPhase[] = [
  'FailedValidation',
  'Completed',
  'PartiallyFailed',
  'Failed',
  'Canceled',
];

export type HookOnError = 'Fail' | 'Continue';

/** A command run in a container of each pod the selector picks, in this namespace. */
export interface Hook {
  /** unique within its list; names the hook in status and Events */
  name: string;
  /** pods of the AppBackup's namespace; every running pod matched runs the command */
  selector: LabelSelector;
  /** default: the pod's first container */
  container?: string;
  /** argv, not a shell line (wrap in ["sh", "-c", "..."] for a shell) */
  command: string[];
  /** Go duration, default "30s": the command is killed at this time and counts as failed */
  timeout?: string;
  /** default Fail: a failed pre hook stops the backup before any snapshot; Continue records it and goes on */
  onError?: HookOnError;
}

export interface AppBackupHooks {
  /** run in order before the snapshots */
  pre?: Hook[];
  /** run in order after the snapshots, always once any pre hook has run (also after a failure or cancel) */
  post?: Hook[];
}

export interface AppBackupSpec {
  /** PVC names of this namespace; with selector, the union */
  pvcs?: string[];
  /** PVCs of this namespace with these labels */
  selector?: LabelSelector;
  backupStorageLocation: string;
  hooks?: AppBackupHooks;
  /** fsfreeze the file system of each backed-up PVC in every Running pod mounting it, after the pre hooks, until the cut */
  freeze?: boolean;
  /** the VolumeGroupSnapshotClass for a group snapshot; default: the default class of the volumes' CSI driver */
  volumeGroupSnapshotClassName?: string;
  /** the VolumeSnapshotClass for per-volume snapshots when there is no group snapshot; default: the driver's default */
  volumeSnapshotClassName?: string;
  /** Go duration, default "10m": how long to wait for the snapshots, and for each DataUpload's steps */
  operationTimeout?: string;
  cancel?: boolean;
  /** Go duration: the AppBackup (and with it its DataUploads and their data) is deleted this long after creation */
  expire?: string;
  tags?: Record<string, string>;
}

export type HookStage = 'pre' | 'post';

/** One hook in one pod. */
export interface HookRun {
  stage: HookStage;
  hook: string;
  pod: string;
  container: string;
  outcome: 'Succeeded' | 'Failed' | 'TimedOut';
  exitCode?: number;
  /** the end of stdout and stderr, bounded */
  output?: string;
  startTime: string;
  endTime: string;
}

export interface AppBackupVolume {
  pvc: string;
  /** the member VolumeSnapshot (of the group, or taken between the hooks) */
  volumeSnapshot?: string;
  dataUpload?: string;
  phase?: Phase;
  bytesDone?: number;
  totalBytes?: number;
  snapshotID?: string;
  message?: string;
}

/** A file system spec.freeze froze (or started to freeze): a PVC as one pod's container mounts it. */
export interface FrozenMount {
  pod: string;
  container: string;
  pvc: string;
  mountPath: string;
}

export interface AppBackupStatus {
  phase?: AppBackupPhase;
  message?: string;
  /** Group: one VolumeGroupSnapshot, one instant for all volumes; PerVolume: each volume's own snapshot */
  consistency?: 'Group' | 'PerVolume';
  volumeGroupSnapshot?: string;
  /** when the snapshots were cut */
  snapshotTime?: string;
  /** the pre hooks' runs (or spec.freeze's freeze) have started: post hooks are owed, also after a crash */
  hooksStarted?: boolean;
  hooks?: HookRun[];
  /** written before each freeze and cleared once thawed: a step that resumes after a crash thaws these first */
  frozen?: FrozenMount[];
  volumes?: AppBackupVolume[];
  /** "done/total" for kubectl's printer column */
  volumesDone?: string;
  bytesDone?: number;
  totalBytes?: number;
  startTimestamp?: string;
  completionTimestamp?: string;
  conditions?: Condition[];
}

export interface AppBackup {
  apiVersion: typeof apiVersion;
  kind: 'AppBackup';
  metadata: ObjectMeta;
  spec: AppBackupSpec;
  status?: AppBackupStatus;
}

export type AppRestorePhase = 'New' | 'FailedValidation' | 'InProgress' | 'Completed' | 'PartiallyFailed' | 'Failed';

export const appRestoreTerminalPhases: readonly AppRestorePhase[] = [
  'FailedValidation',
  'Completed',
  'PartiallyFailed',
  'Failed',
];

export interface AppRestoreSpec {
  /** the AppBackup to restore; in this namespace unless namespace is given (a cross-namespace restore) */
  appBackup: { name: string; namespace?: string };
  /** source PVC names to restore; default all the AppBackup holds */
  volumes?: string[];
  /** the restored PVC's name for a source PVC, when not the source's own name */
  pvcNames?: Record<string, string>;
  storageClassName?: string;
  operationTimeout?: string;
  cancel?: boolean;
}

export interface AppRestoreVolume {
  pvc: string;
  targetPVC: string;
  dataDownload?: string;
  phase?: Phase;
  bytesDone?: number;
  totalBytes?: number;
  message?: string;
}

export interface AppRestoreStatus {
  phase?: AppRestorePhase;
  message?: string;
  volumes?: AppRestoreVolume[];
  volumesDone?: string;
  startTimestamp?: string;
  completionTimestamp?: string;
  conditions?: Condition[];
}

export interface AppRestore {
  apiVersion: typeof apiVersion;
  kind: 'AppRestore';
  metadata: ObjectMeta;
  spec: AppRestoreSpec;
  status?: AppRestoreStatus;
}

/** What a BackupSchedule's runs create instead of one DataUpload per PVC: one AppBackup of all its PVCs. */
export interface ScheduledAppBackup {
  hooks?: AppBackupHooks;
  freeze?: boolean;
  volumeGroupSnapshotClassName?: string;
  volumeSnapshotClassName?: string;
}

export type AppKind = 'AppBackup' | 'AppRestore';

export const appPlurals: Record<AppKind, string> = { AppBackup: 'appbackups', AppRestore: 'apprestores' };
