// ferry's API (ferry.dev/v1alpha1) described once: every field, what it allows and what it means. The CRDs in
// deploy/crds/ (through ./openapi.ts and ./crds.ts) and the dispatcher's valibot schemas (./schemas.ts) are both
// made from these descriptions, so the cluster and the dispatcher cannot disagree about what is valid.
// The shapes are those of ./types.ts; a test checks that typed fixtures pass these descriptions.
import { arr, bool, int, map, num, obj, str } from './field.ts';
import type { ObjectField, Pattern, StringField } from './field.ts';

const dnsLabel: Pattern = {
  regex: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
  allowed: "a DNS-1123 label (lowercase letters, digits and '-', starting and ending with a letter or digit)",
};

const dnsSubdomain: Pattern = {
  regex: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$',
  allowed:
    "a DNS-1123 subdomain (lowercase letters, digits, '-' and '.', each part starting and ending with a letter or digit)",
};

const secretKey: Pattern = {
  regex: '^[-._a-zA-Z0-9]+$',
  allowed: "a Secret key (letters, digits, '-', '_' and '.')",
};

const namespaceOrAll: Pattern = {
  regex: '^(\\*|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$',
  allowed: "a namespace name (a DNS-1123 label) or '*' for every namespace",
};

const goDuration: Pattern = {
  regex: '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$',
  allowed: "a duration such as '30s', '10m' or '1h30m' (units ms, s, m, h)",
};

const quantity: Pattern = {
  regex: '^[0-9]+(\\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$',
  allowed: "a storage quantity such as '10Gi' or '500M'",
};

const snapshotIDPattern: Pattern = {
  regex: '^[0-9a-f]{8,64}$',
  allowed: 'a repository snapshot ID (8 to 64 lowercase hexadecimal digits; a unique prefix is enough)',
};

const fullID: Pattern = { regex: '^[0-9a-f]{64}$', allowed: 'a 64-digit lowercase hexadecimal ID' };

function objectName(description: string): StringField {
  return str(description, { pattern: dnsSubdomain, maxLength: 253 });
}

function namespaceName(description: string): StringField {
  return str(description, { pattern: dnsLabel, maxLength: 63 });
}

const timestamp = (description: string): StringField => str(description, { format: 'date-time' });

// ---- pieces shared by several resources ----

const condition = obj(
  "One observation of the resource (Kubernetes' standard condition).",
  {
    type: str('Kind of condition, in CamelCase (e.g. Ready, Queued).', {
      maxLength: 316,
      pattern: {
        regex:
          '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
        allowed: 'a qualified name such as Ready or example.com/Ready',
      },
    }),
    status: str('Whether the condition holds.', { enum: ['True', 'False', 'Unknown'] }),
    reason: str('Programmatic reason for the last transition, in CamelCase.', {
      minLength: 1,
      maxLength: 1024,
      pattern: {
        regex: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
        allowed: 'a CamelCase word (letters, digits, _ , :)',
      },
    }),
    message: str('Human-readable details of the last transition.', { maxLength: 32768 }),
    lastTransitionTime: timestamp('When the status last changed.'),
    observedGeneration: int('The metadata.generation the condition was set for.', { minimum: 0 }),
  },
  { required: ['type', 'status', 'reason', 'message', 'lastTransitionTime'] },
);

const conditions = arr(
  'Conditions of the resource, one per type: Queued (waiting for a transfer slot), Ready and others set by the steps.',
  condition,
  {
    listType: 'map',
    mapKeys: ['type'],
    maxItems: 32,
  },
);

export const phases = [
  'New',
  'Accepted',
  'Prepared',
  'InProgress',
  'Finalizing',
  'Completed',
  'Failing',
  'Failed',
  'Canceling',
  'Canceled',
] as const;

const phase = str(
  'Where the resource is in its life. DataUpload: New -> Accepted (snapshot ready) -> Prepared (exposed) -> InProgress (transfer) ' +
    '-> Finalizing -> Completed; DataDownload skips Accepted. Failing -> Failed and Canceling -> Canceled clean up first.',
  { enum: phases },
);

const progress = obj('How much of the data has moved; updated every few seconds during the transfer.', {
  bytesDone: int('Bytes read (backup) or written (restore) so far.', { minimum: 0 }),
  totalBytes: int('Bytes to move in all, as far as known.', { minimum: 0 }),
  percent: int('bytesDone as a whole percentage of totalBytes, for the Progress% column.', {
    minimum: 0,
    maximum: 100,
  }),
});

const stepRecord = (step: string): ObjectField =>
  obj(
    `What the ${step} step did last.`,
    {
      attempts: int('Jobs started for this step so far (the Job name ends with the attempt number).', { minimum: 0 }),
      job: objectName("Name of the last Job of this step, in ferry's namespace."),
      startTime: timestamp('When the last attempt started.'),
      endTime: timestamp('When the last attempt ended.'),
      outcome: str('How the last attempt ended.', { enum: ['Succeeded', 'Failed'] }),
      message: str('What the last attempt reported (its termination message).', { maxLength: 32768 }),
    },
    { required: ['attempts'] },
  );

const steps = obj('Bookkeeping per step, written by the steps themselves.', {
  snapshot: stepRecord('snapshot'),
  expose: stepRecord('expose'),
  transfer: stepRecord('transfer'),
  finalize: stepRecord('finalize'),
  delete: stepRecord('delete'),
});

const exposure = obj(
  "Objects the expose step created in ferry's namespace to reach the data; finalize removes them.",
  {
    namespace: namespaceName("Namespace holding the exposure objects (ferry's namespace)."),
    pvc: objectName('PersistentVolumeClaim the transfer Job mounts.'),
    volumeSnapshot: objectName("VolumeSnapshot cloned into ferry's namespace."),
    volumeSnapshotContent: objectName('Pre-provisioned VolumeSnapshotContent behind the cloned VolumeSnapshot.'),
    pv: objectName('PersistentVolume made for a restore, bound to the target PVC by finalize.'),
  },
  { required: ['namespace'] },
);

const stats = obj(
  'Figures of the finished transfer.',
  {
    files: int('Files read or written.', { minimum: 0 }),
    bytes: int('Bytes read or written.', { minimum: 0 }),
    bytesAdded: int('Bytes of new data the repository did not hold yet (before compression).', { minimum: 0 }),
    bytesStored: int('Bytes those additions took in the repository (compressed, encrypted).', { minimum: 0 }),
    durationSeconds: num('How long the transfer took.', { minimum: 0 }),
  },
  { required: ['files', 'bytes', 'bytesAdded', 'bytesStored', 'durationSeconds'] },
);

const commonStatus = {
  phase,
  progress,
  startTimestamp: timestamp('When the first step started.'),
  completionTimestamp: timestamp('When the resource reached Completed, Failed or Canceled.'),
  node: str('Node whose pod moves the data.', { pattern: dnsSubdomain, maxLength: 253 }),
  message: str('Human-readable summary of the last transition or failure.', { maxLength: 32768 }),
  conditions,
  steps,
  exposure,
  stats,
};

const dataMover = str(
  'Data mover to use: "" or "ferry". Resources naming another data mover are left alone by ferry.',
  { maxLength: 253 },
);

const operationTimeout = str('How long to wait for the snapshot to be ready and for each step.', {
  pattern: goDuration,
  default: '10m',
});

const cancel = bool(
  'Set to true to cancel: ferry stops within seconds, cleans up and sets phase Canceled. Cannot be unset.',
  { default: false },
);

// ---- BackupStorageLocation ----

const cronSchedule = (description: string, fallback?: string): StringField =>
  str(description, {
    pattern: {
      regex:
        '^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9*,/?LW#A-Za-z-]+( [0-9*,/?LW#A-Za-z-]+){4})$',
      allowed: "a cron schedule of five fields such as '0 3 * * 0', or @daily, @weekly and the like",
    },
    maxLength: 128,
    ...(fallback === undefined ? {} : { default: fallback }),
  });

const maintenance = obj(
  "Periodic maintenance of every repository under this location: prune frees the data no snapshot uses, check verifies the structure and reads a sample of the data back. ferry runs each as a CronJob in its namespace, under the repository's exclusive lock; a run finding a backup in progress skips that repository and says so.",
  {
    suspend: bool('Stop scheduled maintenance (a Job made by hand from the CronJob still runs).', { default: false }),
    prune: obj('Pruning: forget nothing, but delete and repack what no snapshot uses.', {
      schedule: cronSchedule("When to prune (cron, in the controller manager's time zone).", '0 3 * * 0'),
    }),
    check: obj('Checking the repositories.', {
      schedule: cronSchedule('When to check the structure: index, packs, snapshots and trees (cron).', '0 1 * * *'),
      readDataSchedule: cronSchedule('When to also read a sample of the data back and verify it (cron).', '0 4 * * 6'),
      readDataSubset: str('Share of the packs the data check reads, chosen at random each time.', {
        pattern: { regex: '^([1-9][0-9]?(\\.[0-9]+)?|100)%$', allowed: "a percentage from 1% to 100%, such as '10%'" },
        default: '10%',
      }),
    }),
  },
);

const maintenanceRun = obj(
  'One maintenance run on one repository.',
  {
    task: str('What ran: prune, check (structure) or check-data (structure and a sample of the data).', {
      enum: ['prune', 'check', 'check-data'],
    }),
    outcome: str('How it ended: Skipped when a backup held the repository (it runs again on schedule).', {
      enum: ['Succeeded', 'Failed', 'Skipped'],
    }),
    startTime: timestamp('When the run started.'),
    durationSeconds: num('How long it took.', { minimum: 0 }),
    job: objectName("The Job that ran it, in ferry's namespace."),
    bytesFreed: int('Bytes of packs prune deleted.', { minimum: 0 }),
    packsDeleted: int('Packs prune deleted.', { minimum: 0 }),
    errorsFound: int('Errors check found (see message).', { minimum: 0 }),
    staleLocksRemoved: int('Locks of dead holders removed before the run.', { minimum: 0 }),
    message: str('What happened, in a sentence or two.', { maxLength: 4096 }),
  },
  { required: ['task', 'outcome', 'startTime', 'durationSeconds'] },
);

const maintenanceStatus = obj('Maintenance history: the last runs per repository, and the latest run of all.', {
  lastTask: str('Task of the latest run.', { enum: ['prune', 'check', 'check-data'] }),
  lastOutcome: str('Outcome of the latest run.', { enum: ['Succeeded', 'Failed', 'Skipped'] }),
  lastRunTime: timestamp('When the latest run started.'),
  repositories: arr(
    'Per repository (source namespace), its latest runs.',
    obj(
      'The latest maintenance runs of one repository.',
      {
        namespace: namespaceName('Source namespace of the repository.'),
        runs: arr('Latest runs, newest first.', maintenanceRun, { maxItems: 10 }),
      },
      { required: ['namespace', 'runs'] },
    ),
    { listType: 'map', mapKeys: ['namespace'], maxItems: 1000 },
  ),
});

export const backupStorageLocationSpec = obj(
  'Where and how ferry stores repositories: one repository per source namespace under the prefix.',
  {
    s3: obj(
      'The S3-compatible bucket holding the repositories.',
      {
        endpoint: str('S3 endpoint, http(s)://host[:port].', {
          pattern: {
            regex: '^https?://[^/\\s]+$',
            allowed: 'http:// or https:// followed by host[:port], with no path',
          },
          maxLength: 2048,
        }),
        bucket: str('Bucket name.', {
          pattern: {
            regex: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$',
            allowed: "an S3 bucket name (3-63 lowercase letters, digits, '.' and '-')",
          },
        }),
        prefix: str('Key prefix inside the bucket; repositories live at <prefix>/<source namespace>.', {
          pattern: {
            regex: "^[A-Za-z0-9!_.*'()-]+(/[A-Za-z0-9!_.*'()-]+)*$",
            allowed: "an S3 key prefix without leading or trailing '/' (letters, digits, !_.*'()- and '/')",
          },
          maxLength: 512,
        }),
        region: str('Bucket region.', {
          pattern: { regex: '^[a-z0-9-]+$', allowed: "a region name such as 'us-east-1'" },
          maxLength: 64,
        }),
        forcePathStyle: bool('Put the bucket in the path rather than the host name (needed by MinIO and Ceph).', {
          default: true,
        }),
        caBundle: str(
          "PEM bundle of the CA that signed the endpoint's certificate, base64-encoded, for endpoints with a private CA.",
          {
            pattern: { regex: '^[A-Za-z0-9+/]*={0,2}$', allowed: 'base64 (letters, digits, +, / and = padding)' },
          },
        ),
      },
      { required: ['endpoint', 'bucket'] },
    ),
    credential: obj(
      "Secret in ferry's namespace holding the S3 access keys.",
      {
        name: objectName('Name of the Secret.'),
        accessKeyIDKey: str('Key of the access key ID in the Secret (default AWS_ACCESS_KEY_ID).', {
          pattern: secretKey,
          maxLength: 253,
        }),
        secretAccessKeyKey: str('Key of the secret access key in the Secret (default AWS_SECRET_ACCESS_KEY).', {
          pattern: secretKey,
          maxLength: 253,
        }),
      },
      { required: ['name'] },
    ),
    repositoryPassword: obj(
      "Secret in ferry's namespace holding the master password; each namespace's repository password is derived from it, so tenants never share keys.",
      {
        name: objectName('Name of the Secret.'),
        key: str('Key in the Secret.', { pattern: secretKey, maxLength: 253 }),
      },
      { required: ['name', 'key'] },
    ),
    allowedNamespaces: arr(
      'Namespaces whose PVCs may be backed up to and restored from this location; ["*"] allows every namespace.',
      str('A namespace name, or * for all.', { pattern: namespaceOrAll, maxLength: 63 }),
      { minItems: 1, listType: 'set' },
    ),
    crossNamespaceRestores: arr(
      "Restores reading another namespace's repository: which target namespaces may read which source namespace.",
      obj(
        "Namespaces allowed to restore from one source namespace's repository.",
        {
          from: namespaceName('Source namespace whose repository is read.'),
          to: arr(
            'Target namespaces that may restore from it; ["*"] allows every namespace.',
            str('A namespace name, or * for all.', { pattern: namespaceOrAll, maxLength: 63 }),
            { minItems: 1, listType: 'set' },
          ),
        },
        { required: ['from', 'to'] },
      ),
      { listType: 'map', mapKeys: ['from'] },
    ),
    maintenance,
  },
  { required: ['s3', 'credential', 'repositoryPassword', 'allowedNamespaces'] },
);

export const backupStorageLocationStatus = obj('What ferry last found out about the location.', {
  phase: str('Whether the location was reachable at the last check.', { enum: ['Available', 'Unavailable'] }),
  message: str('Why the location is unavailable, when it is.', { maxLength: 32768 }),
  lastValidationTime: timestamp('When the location was last checked.'),
  conditions,
  maintenance: maintenanceStatus,
});

// ---- DataUpload ----

export const dataUploadSpec = obj(
  "Back up one PVC of this namespace: snapshot it, then move the snapshot's data into the repository.",
  {
    sourcePVC: objectName(
      'Name of the PersistentVolumeClaim to back up, in this namespace; it must exist and be bound.',
    ),
    backupStorageLocation: objectName(
      "BackupStorageLocation (in ferry's namespace) to store the data in; it must allow this namespace.",
    ),
    snapshotMoveData: bool('Move the data into the repository (true) or keep only the CSI snapshot (false).', {
      default: true,
    }),
    csiSnapshot: obj('How to take the CSI snapshot.', {
      volumeSnapshot: objectName(
        'An existing VolumeSnapshot of the PVC, in this namespace, to use instead of taking one.',
      ),
      snapshotClass: objectName("VolumeSnapshotClass for the new snapshot (default: the driver's default class)."),
    }),
    dataMover: dataMover,
    operationTimeout,
    cancel,
    tags: map(
      'Tags recorded on the repository snapshot, as key=value.',
      str('Tag value.', {
        maxLength: 256,
        pattern: { regex: '^[^,\\n]*$', allowed: 'text without commas or line breaks' },
      }),
      { maxProperties: 32 },
    ),
    expire: str(
      'Delete this DataUpload (and free its repository data) this long after its creation, e.g. 720h; the annotation ferry.dev/retain-if-expired: "true" keeps it. Default: never.',
      { pattern: goDuration },
    ),
  },
  { required: ['sourcePVC', 'backupStorageLocation'] },
);

export const dataUploadStatus = obj('Progress and results of the backup, written by ferry.', {
  ...commonStatus,
  snapshotID: str('ID of the repository snapshot holding the data.', { pattern: fullID }),
  parentSnapshotID: str('ID of the repository snapshot this one was made incrementally from.', { pattern: fullID }),
  volumeSnapshot: objectName('The CSI VolumeSnapshot of the source PVC, in this namespace.'),
  volumeMode: str('Volume mode of the source PVC.', { enum: ['Filesystem', 'Block'] }),
});

// ---- DataDownload ----

export const dataDownloadSpec = obj(
  'Restore data from the repository into a PVC of this namespace.',
  {
    targetPVC: obj(
      'The PVC to create and fill (or fill, if it exists and is not bound yet); it becomes usable only once its data is complete.',
      {
        name: objectName('Name of the PVC, in this namespace.'),
        storageClassName: objectName("StorageClass of the new volume (default: the cluster's default class)."),
        size: str('Size of the new volume (default: the size of the backed-up volume).', { pattern: quantity }),
        accessModes: arr(
          'Access modes of the new volume (default ReadWriteOnce).',
          str('An access mode.', { enum: ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'] }),
          { listType: 'set', minItems: 1 },
        ),
        zeroedVolume: bool(
          "Set to true when the storage class gives new volumes that read as zeros (it discards or zeroes them when provisioning): a block restore then skips the backup's all-zero ranges. Default false: they are written, since a volume may hold another tenant's old data.",
          { default: false },
        ),
      },
      { required: ['name'] },
    ),
    backupStorageLocation: objectName(
      "BackupStorageLocation (in ferry's namespace) holding the repository; it must allow this namespace.",
    ),
    source: obj(
      'The data to restore: a repository snapshot ID or a DataUpload.',
      {
        snapshotID: str('Repository snapshot to restore.', { pattern: snapshotIDPattern }),
        dataUpload: obj(
          'DataUpload whose snapshot to restore.',
          {
            name: objectName('Name of the DataUpload.'),
            namespace: namespaceName('Namespace of the DataUpload (default: this namespace).'),
          },
          { required: ['name'] },
        ),
      },
      { exactlyOneOf: ['snapshotID', 'dataUpload'] },
    ),
    sourceNamespace: namespaceName(
      "Namespace whose repository holds the snapshot (default: this namespace); another namespace needs the location's crossNamespaceRestores to allow it.",
    ),
    dataMover: dataMover,
    operationTimeout,
    cancel,
  },
  { required: ['targetPVC', 'backupStorageLocation', 'source'] },
);

export const dataDownloadStatus = obj('Progress and results of the restore, written by ferry.', {
  ...commonStatus,
  snapshotID: str('Full ID of the repository snapshot being restored.', { pattern: fullID }),
});

// ---- BackupSchedule ----

const labelValue: Pattern = {
  regex: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$',
  allowed: "a label value (up to 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit)",
};

const labelKey = str('Label key.', {
  maxLength: 316,
  pattern: {
    regex:
      '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
    allowed: 'a label key such as app or example.com/tier',
  },
});

const labelSelector = obj(
  "PVCs of this namespace with these labels, including PVCs created after the schedule (Kubernetes' label selector).",
  {
    matchLabels: map(
      'Labels a PVC must have, with these values.',
      str('Label value.', { pattern: labelValue, maxLength: 63 }),
      { maxProperties: 64 },
    ),
    matchExpressions: arr(
      'Requirements on labels; all must hold.',
      obj(
        'One requirement on a label.',
        {
          key: labelKey,
          operator: str('How the label relates to values.', { enum: ['In', 'NotIn', 'Exists', 'DoesNotExist'] }),
          values: arr(
            'Values for In and NotIn; empty for Exists and DoesNotExist.',
            str('Label value.', { pattern: labelValue, maxLength: 63 }),
            { maxItems: 64 },
          ),
        },
        { required: ['key', 'operator'] },
      ),
      { maxItems: 32 },
    ),
  },
);

const keep = (what: string): ReturnType<typeof int> =>
  int(
    `Keep the newest backup of each of the last this many ${what} that have backups (restic forget --keep-${what === 'backups' ? 'last' : what}).`,
    { minimum: 0, maximum: 100_000 },
  );

const retention = obj(
  "Which Completed backups of each PVC to keep after every successful run, with restic forget's rules: each rule keeps the newest backup of each of its periods (in spec.timeZone), and a backup any rule keeps is kept; the rest are deleted. The only Completed backup of a PVC and backups a restore in this namespace is reading are never deleted. Empty: keep all.",
  {
    keepLast: keep('backups'),
    keepHourly: keep('hourly'),
    keepDaily: keep('daily'),
    keepWeekly: keep('weekly'),
    keepMonthly: keep('monthly'),
    keepYearly: keep('yearly'),
  },
);

export const backupScheduleSpec = obj(
  'Back up PVCs of this namespace on a cron schedule (a CronJob owned by this object creates one DataUpload per PVC and run), then expire and thin out old backups.',
  {
    schedule: cronSchedule(
      'When to back up: five cron fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly; in spec.timeZone.',
    ),
    timeZone: str('IANA time zone of the schedule and of the retention periods, e.g. Europe/Berlin.', {
      pattern: {
        regex: '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$',
        allowed: 'an IANA time zone name such as UTC or Europe/Berlin',
      },
      maxLength: 64,
      default: 'UTC',
    }),
    pvcs: arr(
      'Names of PVCs of this namespace to back up; with selector, both sets are backed up.',
      objectName('A PVC name.'),
      { listType: 'set', maxItems: 256 },
    ),
    selector: labelSelector,
    backupStorageLocation: objectName(
      "BackupStorageLocation (in ferry's namespace) to store the data in; it must allow this namespace.",
    ),
    snapshotMoveData: bool('Move the data into the repository (true) or keep only the CSI snapshots (false).', {
      default: true,
    }),
    expire: str(
      "Each backup is deleted this long after it was made, e.g. 720h (set as the DataUploads' spec.expire). Default: never.",
      { pattern: goDuration },
    ),
    retention,
    suspend: bool('Stop starting runs (the CronJob is suspended); a run already started finishes.', { default: false }),
    concurrencyPolicy: str(
      'What a run does when DataUploads of an earlier run are not finished: Allow starts its own too, Forbid skips this run, Replace cancels the earlier ones first.',
      {
        enum: ['Allow', 'Forbid', 'Replace'],
        default: 'Forbid',
      },
    ),
    jitter: str(
      'Spread the load: each run waits a stable pseudo-random delay below this before creating its DataUploads, e.g. 5m.',
      { pattern: goDuration },
    ),
  },
  { required: ['schedule', 'backupStorageLocation'] },
);

const runPVC = obj(
  'The outcome of one PVC in a run.',
  {
    pvc: objectName('The PVC.'),
    dataUpload: objectName('The DataUpload of this PVC and run.'),
    phase: str('Phase of that DataUpload when last seen.', { enum: phases }),
    message: str('Why it failed, when it did.', { maxLength: 4096 }),
  },
  { required: ['pvc'] },
);

const scheduleRun = obj(
  'The latest run.',
  {
    run: str('Run id: the scheduled time (UTC, yyyymmddhhmm); the ferry.dev/run label of its DataUploads.', {
      pattern: { regex: '^[0-9]{12}$', allowed: 'twelve digits (yyyymmddhhmm)' },
    }),
    scheduledTime: timestamp('When the run was due.'),
    outcome: str(
      'Running until every DataUpload ended; Succeeded when all Completed; Skipped when concurrencyPolicy Forbid found earlier ones unfinished.',
      {
        enum: ['Running', 'Succeeded', 'Failed', 'Skipped'],
      },
    ),
    message: str('What happened, in a sentence.', { maxLength: 4096 }),
    pvcs: arr('Outcome per PVC.', runPVC, { listType: 'map', mapKeys: ['pvc'], maxItems: 512 }),
    deleted: arr('DataUploads retention deleted after this run.', objectName('A DataUpload name.'), { maxItems: 1024 }),
  },
  { required: ['run', 'scheduledTime', 'outcome'] },
);

export const backupScheduleStatus = obj('What the schedule did, written by ferry.', {
  observedGeneration: int('metadata.generation the CronJob was last made from.', { minimum: 0 }),
  cronJob: objectName('The CronJob (in this namespace, owned by this schedule) that starts the runs.'),
  lastScheduleTime: timestamp('When the latest run was due.'),
  lastSuccessfulTime: timestamp('When the latest run whose backups all Completed was due.'),
  nextScheduleTime: timestamp('When the next run is due (none while suspended).'),
  missedRuns: int(
    'Runs that were due but did not start (cluster down, CronJob past its deadline), counted since creation.',
    { minimum: 0 },
  ),
  lastRun: scheduleRun,
  conditions,
});

export interface KindFields {
  spec: ObjectField;
  status: ObjectField;
}

export const fieldsOf = {
  BackupStorageLocation: { spec: backupStorageLocationSpec, status: backupStorageLocationStatus },
  DataUpload: { spec: dataUploadSpec, status: dataUploadStatus },
  DataDownload: { spec: dataDownloadSpec, status: dataDownloadStatus },
  BackupSchedule: { spec: backupScheduleSpec, status: backupScheduleStatus },
} satisfies Record<string, KindFields>;

export type DescribedKind = keyof typeof fieldsOf;
