// ferry's Kubernetes API: the BackupStorageLocation, which lives in ferry's own namespace, with its maintenance and
// backup sync. The other resources' shapes are in ./types.ts, which re-exports these.
import type { apiVersion, Condition, ObjectMeta, SecretKeyRef } from './types.ts';

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
