// BackupStorageLocation: where a repository lives (S3), who may use it, and when its maintenance runs.
import { arr, bool, int, num, obj, str } from '../field.ts';
import { retentionRule } from '../object-lock.ts';
import { secretKey, namespaceOrAll, objectName, namespaceName, timestamp, conditions, cronSchedule } from './common.ts';

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

const objectLock = obj(
  'S3 Object Lock (the bucket must have been created with it): every object ferry writes here is retained in this mode for this period, extended after each backup and copy to what kept snapshots need; prune and expiry leave what is still retained.',
  {
    mode: str(
      'GOVERNANCE: users with s3:BypassGovernanceRetention may still delete; COMPLIANCE: nobody may, until the retention ends.',
      { enum: ['GOVERNANCE', 'COMPLIANCE'] },
    ),
    retention: str(
      `How long each object is kept from when it is written or its retention is extended: whole days such as 30d, or a duration such as 720h; ${retentionRule}.`,
      {
        pattern: {
          regex: '^([0-9]+[dD]|([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+)$',
          allowed: "a period such as '30d', '720h' or '90s' (units d, h, m, s, ms)",
        },
        maxLength: 64,
      },
    ),
  },
  { required: ['mode', 'retention'] },
);

const backupSync = obj(
  "List the backups this location's repositories hold and make each appear as a DataUpload in its namespace (for namespaces that exist on this cluster and that the location allows), restorable without moving data: the restore side of a second site. ferry runs it as a CronJob ferry-sync-<location> in its namespace.",
  {
    schedule: cronSchedule("When to sync (cron, in the controller manager's time zone).", '* * * * *'),
    suspend: bool('Stop syncing (the DataUploads made so far stay).', { default: false }),
  },
);

const syncStatus = obj('The latest backup sync (spec.backupSync).', {
  lastSyncTime: timestamp('When the latest sync ran.'),
  created: int('DataUploads the latest sync created.', { minimum: 0 }),
  deleted: int('Synced DataUploads the latest sync deleted, their snapshot being gone.', { minimum: 0 }),
  found: int('Backups the latest sync found in the repositories.', { minimum: 0 }),
  message: str('What the latest sync left alone or failed on, in a sentence or two.', { maxLength: 32768 }),
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
    objectLock,
    recoverVersions: bool(
      'Read what the object versions hold, past delete markers and overwritten objects (an Object Lock bucket after an attack): restores, listings and backup sync only; nothing is written to this location while it is set, and it cannot be set with objectLock.',
      { default: false },
    ),
    backupSync,
    velero: obj(
      "Make this the location of Velero's DataUploads and DataDownloads that name ferry as their data mover and this Velero BackupStorageLocation. Point s3 at the same bucket, with the prefix <Velero's prefix>/plugins/ferry, so Velero keeps its location Available.",
      {
        backupStorageLocation: objectName("Name of Velero's BackupStorageLocation, in Velero's namespace."),
      },
      { required: ['backupStorageLocation'] },
    ),
  },
  { required: ['s3', 'credential', 'repositoryPassword', 'allowedNamespaces'] },
);

export const backupStorageLocationStatus = obj('What ferry last found out about the location.', {
  phase: str('Whether the location was reachable at the last check.', { enum: ['Available', 'Unavailable'] }),
  message: str('Why the location is unavailable, when it is.', { maxLength: 32768 }),
  lastValidationTime: timestamp('When the location was last checked.'),
  conditions,
  maintenance: maintenanceStatus,
  sync: syncStatus,
});
