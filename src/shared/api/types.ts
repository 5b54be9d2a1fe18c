// ferry's Kubernetes API, group ferry.dev, version v1alpha1: the TypeScript shapes of the custom resources.
// Field names follow Velero's DataUpload/DataDownload where they mean the same thing. The CRD schemas in
// deploy/crds/ and the valibot schemas in ./schemas.ts describe exactly these shapes; a test holds them together.
// Application backups (AppBackup, AppRestore) are in ./app.ts.
import type { ScheduledAppBackup } from './app.ts';
import type { BackupCopyRecord } from './copy.ts';

export const group = 'ferry.dev';
export const version = 'v1alpha1';
export const apiVersion = `${group}/${version}`;

export interface ObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
}

/** Kubernetes' standard condition (metav1.Condition). */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime: string;
  observedGeneration?: number;
}

export interface SecretKeyRef {
  name: string;
  key: string;
}

// The BackupStorageLocation's shapes are in ./location.ts.
export type {
  BackupStorageLocationSpec,
  MaintenanceSpec,
  MaintenanceTask,
  MaintenanceOutcome,
  MaintenanceRun,
  RepositoryMaintenance,
  MaintenanceStatus,
  BackupStorageLocationStatus,
  LocationSyncStatus,
  BackupStorageLocation,
} from './location.ts';

// ---- Shared by DataUpload and DataDownload ----

export type Phase =
  | 'New'
  | 'Accepted'
  | 'Prepared'
  | 'InProgress'
  | 'Finalizing'
  | 'Completed'
  | 'Failing'
  | 'Failed'
  | 'Canceling'
  | 'Canceled';

export interface Progress {
  bytesDone: number;
  totalBytes: number;
  /** bytesDone as a whole percentage of totalBytes: a printer column cannot compute it */
  percent?: number;
}

/** What each step did last: attempts (the Job name carries the attempt), and when it ran. */
export interface StepRecord {
  attempts: number;
  job?: string;
  startTime?: string;
  endTime?: string;
  outcome?: 'Succeeded' | 'Failed';
  message?: string;
}

/**
 * The steps of a DataUpload or DataDownload, in the order they run: the one list the dispatcher names its Jobs by,
 * `ferry-step` runs, and the CLI shows.
 */
export const stepNames = ['snapshot', 'expose', 'transfer', 'finalize', 'delete'] as const;

export type StepName = (typeof stepNames)[number];

export function isStepName(text: string): text is StepName {
  return (stepNames as readonly string[]).includes(text);
}

/**
 * Everything `ferry-step` runs: the data steps, a BackupSchedule's reconcile (started by the dispatcher) and its
 * scheduled run, a storage location's maintenance and backup sync (CronJobs per location), the one long-running step
 * of each AppBackup and AppRestore, and the one step of each DataCopy.
 */
export const stepCommands = [
  ...stepNames,
  'schedule',
  'schedule-run',
  'maintenance',
  'location-sync',
  'app-backup',
  'app-restore',
  'copy',
] as const;

export type StepCommand = (typeof stepCommands)[number];

export interface TransferStats {
  files: number;
  bytes: number;
  bytesAdded: number;
  bytesStored: number;
  durationSeconds: number;
}

interface CommonStatus {
  phase?: Phase;
  progress?: Progress;
  startTimestamp?: string;
  completionTimestamp?: string;
  /** node whose pod moves the data */
  node?: string;
  message?: string;
  conditions?: Condition[];
  steps?: Partial<Record<StepName, StepRecord>>;
  /** objects the expose step created in ferry's namespace; finalize removes them */
  exposure?: { namespace: string; pvc?: string; volumeSnapshot?: string; volumeSnapshotContent?: string; pv?: string };
  stats?: TransferStats;
}

// ---- DataUpload: backup of one PVC (in the PVC's namespace) ----

export interface DataUploadSpec {
  sourcePVC: string;
  backupStorageLocation: string;
  /** false: keep the CSI snapshot only, move no data */
  snapshotMoveData?: boolean;
  csiSnapshot?: {
    volumeSnapshot?: string;
    snapshotClass?: string;
    /** delete the named snapshot, its content and the storage snapshot once the backup ends (Velero's contract) */
    deleteWhenDone?: boolean;
  };
  /** "" or "ferry"; resources for other data movers are left alone */
  dataMover?: string;
  /** e.g. "10m": how long to wait for the snapshot and each step */
  operationTimeout?: string;
  cancel?: boolean;
  tags?: Record<string, string>;
  /** e.g. "720h": the DataUpload is deleted this long after its creation (unless annotated ferry.dev/retain-if-expired) */
  expire?: string;
}

/** A block volume's changed-block tracking: the snapshot kept as the next backup's base, and how this one read. */
export interface ChangeTracking {
  driver?: string;
  snapshotHandle?: string;
  retainedContent?: string;
  mode?: 'Changed' | 'Allocated' | 'Full';
  bytesRead?: number;
  reason?: string;
}

export interface DataUploadStatus extends CommonStatus {
  /** repository snapshot id */
  snapshotID?: string;
  parentSnapshotID?: string;
  changeTracking?: ChangeTracking;
  volumeSnapshot?: string;
  /** Filesystem or Block, copied from the source PVC */
  volumeMode?: 'Filesystem' | 'Block';
  /** StorageClass of the source PVC, copied from it: a restore's default class */
  storageClassName?: string;
  /** copies of this backup in other locations (DataCopies), as their copy step last wrote them */
  copies?: BackupCopyRecord[];
}

export interface DataUpload {
  apiVersion: typeof apiVersion;
  kind: 'DataUpload';
  metadata: ObjectMeta;
  spec: DataUploadSpec;
  status?: DataUploadStatus;
}

// ---- DataDownload: restore into a PVC (in the target namespace) ----

export interface DataDownloadSpec {
  /** the PVC to create (or fill, if it exists and is unbound) */
  targetPVC: {
    name: string;
    storageClassName?: string;
    size?: string;
    accessModes?: string[];
    /** the storage class gives new volumes that read as zeros: a block restore skips zero ranges */
    zeroedVolume?: boolean;
    /** someone else (Velero) creates the PVC after this resource: wait for it, take its shape, never create it */
    awaitClaim?: boolean;
  };
  backupStorageLocation: string;
  /** the data to restore: a repository snapshot id, or a DataUpload (its namespace defaults to this one) */
  source: { snapshotID?: string; dataUpload?: { name: string; namespace?: string } };
  /** namespace whose repository holds the snapshot; default this namespace */
  sourceNamespace?: string;
  dataMover?: string;
  operationTimeout?: string;
  cancel?: boolean;
}

export interface DataDownloadStatus extends CommonStatus {
  snapshotID?: string;
}

export interface DataDownload {
  apiVersion: typeof apiVersion;
  kind: 'DataDownload';
  metadata: ObjectMeta;
  spec: DataDownloadSpec;
  status?: DataDownloadStatus;
}

export type FerryResource = DataUpload | DataDownload;
export type ResourceKind = FerryResource['kind'];

// ---- BackupSchedule: DataUploads on a cron schedule, with expiry and retention (in the PVCs' namespace) ----

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist'; values?: string[] }[];
}

export interface RetentionPolicy {
  keepLast?: number;
  keepHourly?: number;
  keepDaily?: number;
  keepWeekly?: number;
  keepMonthly?: number;
  keepYearly?: number;
}

export type ConcurrencyPolicy = 'Allow' | 'Forbid' | 'Replace';

export interface BackupScheduleSpec {
  /** five-field cron, or @daily and the like */
  schedule: string;
  /** IANA time zone of the schedule and of the retention buckets; default UTC */
  timeZone?: string;
  /** PVC names; with selector, the union */
  pvcs?: string[];
  selector?: LabelSelector;
  backupStorageLocation: string;
  snapshotMoveData?: boolean;
  /** copied into each DataUpload's spec.expire */
  expire?: string;
  retention?: RetentionPolicy;
  suspend?: boolean;
  /** a run finding the previous run's DataUploads unfinished: Allow (run too), Forbid (skip), Replace (cancel them) */
  concurrencyPolicy?: ConcurrencyPolicy;
  /** the run waits a stable pseudo-random delay below this before creating its DataUploads */
  jitter?: string;
  /** set: each run creates one AppBackup of all the PVCs (hooks, one instant) instead of one DataUpload per PVC */
  appBackup?: ScheduledAppBackup;
}

export type RunOutcome = 'Running' | 'Succeeded' | 'Failed' | 'Skipped';

export interface ScheduleRun {
  /** the run's id, also the ferry.dev/run label of its DataUploads or AppBackup */
  run: string;
  scheduledTime: string;
  outcome: RunOutcome;
  message?: string;
  pvcs?: { pvc: string; dataUpload?: string; phase?: Phase; message?: string }[];
  /** backups retention deleted after the run: DataUploads, or AppBackups of a schedule with spec.appBackup */
  deleted?: string[];
}

export interface BackupScheduleStatus {
  observedGeneration?: number;
  cronJob?: string;
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
  nextScheduleTime?: string;
  /** scheduled times that passed without a run, counted since creation */
  missedRuns?: number;
  lastRun?: ScheduleRun;
  conditions?: Condition[];
}

export interface BackupSchedule {
  apiVersion: typeof apiVersion;
  kind: 'BackupSchedule';
  metadata: ObjectMeta;
  spec: BackupScheduleSpec;
  status?: BackupScheduleStatus;
}

export const plurals: Record<ResourceKind | 'BackupStorageLocation' | 'BackupSchedule', string> = {
  DataUpload: 'datauploads',
  DataDownload: 'datadownloads',
  BackupStorageLocation: 'backupstoragelocations',
  BackupSchedule: 'backupschedules',
};
