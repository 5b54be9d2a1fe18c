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

// ---- BackupStorageLocation (lives in ferry's own namespace) ----

export interface BackupStorageLocationSpec {
  s3: {
    /** http(s)://host[:port] */
    endpoint: string;
    bucket: string;
    /** repositories live at <prefix>/<source namespace> */
    prefix?: string;
    region?: string;
    /** default true: bucket in the path (MinIO, Ceph) */
    forcePathStyle?: boolean;
    /** PEM CA bundle, base64, for endpoints with a private CA */
    caBundle?: string;
  };
  /** Secret in ferry's namespace with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (keys overridable) */
  credential: { name: string; accessKeyIDKey?: string; secretAccessKeyKey?: string };
  /** Secret in ferry's namespace holding the password from which each namespace's repository password is derived */
  repositoryPassword: SecretKeyRef;
  /** namespaces whose PVCs may be backed up here; ["*"] allows all */
  allowedNamespaces: string[];
  /** restores reading another namespace's repository: from -> allowed target namespaces */
  crossNamespaceRestores?: { from: string; to: string[] }[];
  /** periodic prune and check of every repository under this location (CronJobs made by ferry) */
  maintenance?: MaintenanceSpec;
  /** this location stores the data of Velero's BackupStorageLocation of that name (ferry as Velero's data mover) */
  velero?: { backupStorageLocation: string };
  /**
   * S3 Object Lock (the bucket must have been created with it): every object ferry writes here is retained in this
   * mode for this period (e.g. "30d", "720h"), extended after each backup and copy to what kept snapshots need;
   * prune and expiry leave what is still retained.
   */
  objectLock?: { mode: 'GOVERNANCE' | 'COMPLIANCE'; retention: string };
  /**
   * Read what the object versions hold, past delete markers and overwrites (an Object Lock bucket after an attack):
   * restores and listings only; nothing is written here while it is set.
   */
  recoverVersions?: boolean;
  /** set: the backups found in this location's repositories appear as DataUploads in their namespaces */
  backupSync?: {
    /** five-field cron of the sync CronJob; default every minute */
    schedule?: string;
    suspend?: boolean;
  };
}

export interface MaintenanceSpec {
  /** true: no maintenance runs by schedule (a Job made from the CronJob by hand still runs) */
  suspend?: boolean;
  prune?: { schedule?: string };
  check?: {
    /** structure check (index, packs listed, snapshots, trees) */
    schedule?: string;
    /** reading a sample of the data back */
    readDataSchedule?: string;
    /** share of the packs the data check reads, e.g. "10%" */
    readDataSubset?: string;
  };
}

export type MaintenanceTask = 'prune' | 'check' | 'check-data';
export type MaintenanceOutcome = 'Succeeded' | 'Failed' | 'Skipped';

/** One maintenance run on one repository. */
export interface MaintenanceRun {
  task: MaintenanceTask;
  outcome: MaintenanceOutcome;
  startTime: string;
  durationSeconds: number;
  /** the Job that ran it */
  job?: string;
  bytesFreed?: number;
  packsDeleted?: number;
  errorsFound?: number;
  staleLocksRemoved?: number;
  /** files prune left because S3 Object Lock still retains them */
  filesRetained?: number;
  message?: string;
}

export interface RepositoryMaintenance {
  /** source namespace of the repository */
  namespace: string;
  /** newest first, bounded */
  runs: MaintenanceRun[];
}

export interface MaintenanceStatus {
  lastTask?: MaintenanceTask;
  lastOutcome?: MaintenanceOutcome;
  lastRunTime?: string;
  repositories?: RepositoryMaintenance[];
}

export interface BackupStorageLocationStatus {
  phase?: 'Available' | 'Unavailable';
  message?: string;
  lastValidationTime?: string;
  conditions?: Condition[];
  maintenance?: MaintenanceStatus;
  /** the last backup sync (spec.backupSync) */
  sync?: LocationSyncStatus;
}

export interface LocationSyncStatus {
  lastSyncTime?: string;
  /** DataUploads the last sync created and deleted, and the backups it found */
  created?: number;
  deleted?: number;
  found?: number;
  message?: string;
}

export interface BackupStorageLocation {
  apiVersion: typeof apiVersion;
  kind: 'BackupStorageLocation';
  metadata: ObjectMeta;
  spec: BackupStorageLocationSpec;
  status?: BackupStorageLocationStatus;
}

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
