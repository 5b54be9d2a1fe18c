// DataCopy and CopyPolicy (the shapes of ../copy.ts): one backup copied into a second location, and the policy
// that makes such copies as backups complete; and the record of each copy a DataUpload's status keeps.
import { arr, bool, int, num, obj, str } from '../field.ts';
import type { StringField } from '../field.ts';
import type { CopyPhase } from '../copy.ts';
import { cancel, conditions, fullID, goDuration, namespaceName, objectName, timestamp } from './common.ts';
import { labelSelector } from './selector.ts';

const copyPhases: readonly CopyPhase[] = ['New', 'InProgress', 'Completed', 'Failed', 'Canceled'];

const copyPhase = (description: string): StringField => str(description, { enum: copyPhases });

export const dataCopySpec = obj(
  "Copy one DataUpload's repository snapshot into another BackupStorageLocation's repository for this namespace (written with that location's own keys, deduplicated against what it already holds).",
  {
    dataUpload: objectName(
      'Name of the DataUpload (in this namespace) whose snapshot is copied; it must be Completed.',
    ),
    backupStorageLocation: objectName(
      "The destination BackupStorageLocation (in ferry's namespace); it must allow this namespace and differ from the DataUpload's location.",
    ),
    policy: objectName('The CopyPolicy that made this copy; unset for a copy made by hand.'),
    expire: str(
      'Delete this DataCopy (and forget the copied snapshot) this long after the copy completed, e.g. 720h. Default: the copy lives as long as its DataUpload.',
      { pattern: goDuration },
    ),
    operationTimeout: str('How long one attempt of the copy may run, e.g. 1h.', { pattern: goDuration }),
    cancel,
  },
  { required: ['dataUpload', 'backupStorageLocation'] },
);

const copyStats = obj(
  'Figures of the finished copy.',
  {
    blobs: int('New blobs the destination did not hold yet.', { minimum: 0 }),
    bytesSent: int('Bytes of pack files written to the destination (what crossed the network).', { minimum: 0 }),
    durationSeconds: num('How long the copy took.', { minimum: 0 }),
  },
  { required: ['blobs', 'bytesSent', 'durationSeconds'] },
);

const progress = obj('How much of the snapshot has been copied; updated every few seconds.', {
  bytesDone: int('Bytes copied so far.', { minimum: 0 }),
  totalBytes: int('Bytes to copy in all, as far as known.', { minimum: 0 }),
  percent: int('bytesDone as a whole percentage of totalBytes.', { minimum: 0, maximum: 100 }),
});

export const dataCopyStatus = obj('Progress and results of the copy, written by ferry.', {
  phase: copyPhase(
    'Where the copy is in its life: New -> InProgress (an attempt runs or waits for its retry) -> Completed; Failed only for what can never work, Canceled by spec.cancel or deletion.',
  ),
  sourceSnapshotID: str("The DataUpload's snapshot in its own location.", { pattern: fullID }),
  snapshotID: str("The copy's snapshot in the destination repository.", { pattern: fullID }),
  startTimestamp: timestamp('When the first attempt started.'),
  completionTimestamp: timestamp('When the copy reached Completed, Failed or Canceled.'),
  attempts: int('Attempts started; a failed one is retried after a delay doubling from 1 minute up to 1 hour.', {
    minimum: 0,
  }),
  nextAttemptTime: timestamp('When the next attempt is due after a failure.'),
  job: objectName("The Job of the current or last attempt, in ferry's namespace."),
  progress,
  stats: copyStats,
  message: str('Human-readable summary of the last transition or failure.', { maxLength: 32768 }),
  conditions,
});

/** How a CopyPolicy names a BackupSchedule: "name" (in any namespace) or "namespace/name". */
const scheduleRef = str('A BackupSchedule: "name" in any namespace, or "namespace/name".', {
  pattern: {
    regex: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?/)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
    allowed: '"name" or "namespace/name" of a BackupSchedule (a namespace name, then a DNS-1123 subdomain)',
  },
  maxLength: 63 + 1 + 253,
});

export const copyPolicySpec = obj(
  "Copy the backups (DataUploads) of one BackupStorageLocation into another soon after they complete: one DataCopy per backup. Lives in ferry's namespace.",
  {
    sourceLocation: objectName('BackupStorageLocation whose Completed backups are copied.'),
    destinationLocation: objectName(
      'BackupStorageLocation the copies go to, typically another S3 endpoint in another site; it must differ from sourceLocation.',
    ),
    namespaces: arr(
      'Only backups of these namespaces, each of which the destination must allow. Default: every namespace the destination allows.',
      namespaceName('A namespace name.'),
      { listType: 'set', maxItems: 1000 },
    ),
    selector: labelSelector("Only DataUploads with these labels (Kubernetes' label selector).", 'DataUpload'),
    schedules: arr('Only DataUploads made by these BackupSchedules.', scheduleRef, { listType: 'set', maxItems: 256 }),
    expire: str(
      "Each copy is deleted this long after it completed, e.g. 720h (the DataCopies' spec.expire). Default: a copy lives as long as its backup.",
      { pattern: goDuration },
    ),
    suspend: bool('Make no new copies (those running finish).', { default: false }),
  },
  { required: ['sourceLocation', 'destinationLocation'] },
);

export const copyPolicyStatus = obj('What the policy has done, written by ferry.', {
  observedGeneration: int('The metadata.generation this status was written for.', { minimum: 0 }),
  copiesCompleted: int('DataCopies of this policy that completed.', { minimum: 0 }),
  lastCopyTime: timestamp('When the last copy of this policy completed.'),
  copiesRetrying: int('DataCopies of this policy waiting for a retry.', { minimum: 0 }),
  conditions,
});

/** DataUpload.status.copies: one entry per DataCopy of the backup. */
export const backupCopies = arr(
  'Copies of this backup in other locations (DataCopies), as their copy step last wrote them.',
  obj(
    'Where one copy of the backup exists or is being made.',
    {
      backupStorageLocation: objectName('The location holding the copy.'),
      dataCopy: objectName('The DataCopy making it, in this namespace.'),
      phase: copyPhase("The DataCopy's phase."),
      snapshotID: str("The copy's snapshot in that location's repository.", { pattern: fullID }),
      completionTimestamp: timestamp('When the copy completed.'),
      message: str('The last failure, while attempts go on.', { maxLength: 32768 }),
    },
    { required: ['backupStorageLocation', 'dataCopy', 'phase'] },
  ),
  { listType: 'map', mapKeys: ['dataCopy'], maxItems: 64 },
);
