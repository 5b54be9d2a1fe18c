// Copies of backups into a second storage location (ferry.dev/v1alpha1): a DataCopy copies one DataUpload's
// repository snapshot into another location's repository for the same namespace (its own keys, deduplicated
// against what is there); a CopyPolicy, kept by the cluster's administrator in ferry's namespace, makes DataCopies
// for the backups of one location as they complete. A copy failing never changes the backup it copies.
import type { Condition, LabelSelector, ObjectMeta, Progress } from './types.ts';
import { apiVersion } from './types.ts';

export type CopyPhase =
  | 'New'
  /** an attempt runs or waits for its next try (status.attempts, status.nextAttemptTime) */
  | 'InProgress'
  | 'Completed'
  /** what can never work: the DataUpload is gone or never completed, the destination refuses the namespace */
  | 'Failed'
  /** spec.cancel or deletion stopped it */
  | 'Canceled';

export const copyTerminalPhases: readonly CopyPhase[] = ['Completed', 'Failed', 'Canceled'];

// ---- DataCopy: one backup copied into another location (in the DataUpload's namespace) ----

export interface DataCopySpec {
  /** the DataUpload (same namespace) whose snapshot is copied; it must be Completed */
  dataUpload: string;
  /** the destination location; it must allow this namespace and differ from the DataUpload's */
  backupStorageLocation: string;
  /** the CopyPolicy that made this copy (absent for a copy made by hand) */
  policy?: string;
  /**
   * e.g. "720h": the DataCopy (and the copied snapshot) is deleted this long after the copy completed. Unset: the
   * copy lives as long as its DataUpload (an owner reference: deleting the backup deletes the copy).
   */
  expire?: string;
  /** e.g. "1h": how long one attempt may run */
  operationTimeout?: string;
  cancel?: boolean;
}

export interface CopyStats {
  /** new blobs the destination did not have */
  blobs: number;
  /** bytes of pack files written to the destination (what crossed the network) */
  bytesSent: number;
  durationSeconds: number;
}

export interface DataCopyStatus {
  phase?: CopyPhase;
  /** the DataUpload's snapshot in its own location */
  sourceSnapshotID?: string;
  /** the copy's snapshot id in the destination repository */
  snapshotID?: string;
  startTimestamp?: string;
  completionTimestamp?: string;
  /** attempts started; a failed one is retried after a delay doubling from 1 minute up to 1 hour */
  attempts?: number;
  nextAttemptTime?: string;
  /** the Job of the current or last attempt */
  job?: string;
  progress?: Progress;
  stats?: CopyStats;
  message?: string;
  /** Copied: True once completed; False with the last failure's reason while attempts go on */
  conditions?: Condition[];
}

export interface DataCopy {
  apiVersion: typeof apiVersion;
  kind: 'DataCopy';
  metadata: ObjectMeta;
  spec: DataCopySpec;
  status?: DataCopyStatus;
}

/** One entry of DataUpload.status.copies: where a copy of the backup exists or is being made. */
export interface BackupCopyRecord {
  backupStorageLocation: string;
  dataCopy: string;
  phase: CopyPhase;
  snapshotID?: string;
  completionTimestamp?: string;
  message?: string;
}

// ---- CopyPolicy: which backups of a location are copied where (in ferry's namespace) ----

export interface CopyPolicySpec {
  /** backups stored in this location are copied */
  sourceLocation: string;
  /** into this one (another S3 endpoint, typically in another site) */
  destinationLocation: string;
  /** only backups of these namespaces; default every namespace the destination allows */
  namespaces?: string[];
  /** only DataUploads with these labels */
  selector?: LabelSelector;
  /** only DataUploads made by these BackupSchedules: "name" in any namespace or "namespace/name" */
  schedules?: string[];
  /** each DataCopy's spec.expire; unset: copies live as long as their backups */
  expire?: string;
  /** true: no new copies (those running finish) */
  suspend?: boolean;
}

export interface CopyPolicyStatus {
  observedGeneration?: number;
  /** DataCopies this policy made that completed, and when the last did */
  copiesCompleted?: number;
  lastCopyTime?: string;
  /** DataCopies of this policy waiting for a retry */
  copiesRetrying?: number;
  conditions?: Condition[];
}

export interface CopyPolicy {
  apiVersion: typeof apiVersion;
  kind: 'CopyPolicy';
  metadata: ObjectMeta;
  spec: CopyPolicySpec;
  status?: CopyPolicyStatus;
}

export type CopyKind = 'DataCopy' | 'CopyPolicy';

export const copyPlurals: Record<CopyKind, string> = { DataCopy: 'datacopies', CopyPolicy: 'copypolicies' };
