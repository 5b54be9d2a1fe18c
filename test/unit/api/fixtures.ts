// Resources with every field set, typed by src/shared/api/types.ts: the type checker refuses a field the types do
// not have, and a test refuses a described field these objects lack, so types.ts and fields.ts describe one API.
import type { AppBackup, AppBackupHooks, AppRestore } from '../../../src/shared/api/app.ts';
import type {
  BackupSchedule,
  BackupStorageLocation,
  Condition,
  DataDownload,
  DataUpload,
  StepRecord,
} from '../../../src/shared/api/types.ts';

export const time = '2025-03-01T10:00:00Z';
const id = 'a'.repeat(64);

export const condition: Condition = {
  type: 'Queued',
  status: 'False',
  reason: 'Dispatched',
  message: 'a transfer slot is free',
  lastTransitionTime: time,
  observedGeneration: 1,
};

const record: StepRecord = {
  attempts: 1,
  job: 'ferry-up-0123456789abcdef-snapshot-1',
  startTime: time,
  endTime: time,
  outcome: 'Succeeded',
  message: '{}',
};

const common = {
  progress: { bytesDone: 50, totalBytes: 100, percent: 50 },
  startTimestamp: time,
  completionTimestamp: time,
  node: 'node-1',
  message: 'done',
  conditions: [condition],
  steps: { snapshot: record, expose: record, transfer: record, finalize: record, delete: record },
  exposure: {
    namespace: 'ferry-system',
    pvc: 'ferry-up-x',
    volumeSnapshot: 'ferry-up-x',
    volumeSnapshotContent: 'ferry-up-x',
    pv: 'ferry-down-x',
  },
  stats: { files: 3, bytes: 100, bytesAdded: 10, bytesStored: 8, durationSeconds: 1.5 },
};

export const fullLocation: BackupStorageLocation = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'BackupStorageLocation',
  metadata: { name: 'default', namespace: 'ferry-system' },
  spec: {
    s3: {
      endpoint: 'https://s3.example.com:9000',
      bucket: 'backups',
      prefix: 'ferry/prod',
      region: 'us-east-1',
      forcePathStyle: true,
      caBundle: 'TFMwdExTMUNSVWRKVGc9PQ==',
    },
    credential: { name: 's3-keys', accessKeyIDKey: 'id', secretAccessKeyKey: 'secret' },
    repositoryPassword: { name: 'repo-password', key: 'password' },
    allowedNamespaces: ['app', 'other'],
    crossNamespaceRestores: [{ from: 'app', to: ['other'] }],
    maintenance: {
      suspend: false,
      prune: { schedule: '0 3 * * 0' },
      check: { schedule: '@daily', readDataSchedule: '0 4 * * 6', readDataSubset: '12.5%' },
    },
    velero: { backupStorageLocation: 'default' },
    objectLock: { mode: 'GOVERNANCE', retention: '30d' },
    recoverVersions: false,
    backupSync: { schedule: '*/5 * * * *', suspend: false },
  },
  status: {
    phase: 'Available',
    message: 'reachable',
    lastValidationTime: time,
    conditions: [condition],
    maintenance: {
      lastTask: 'prune',
      lastOutcome: 'Succeeded',
      lastRunTime: time,
      repositories: [
        {
          namespace: 'app',
          runs: [
            {
              task: 'prune',
              outcome: 'Succeeded',
              startTime: time,
              durationSeconds: 2.5,
              job: 'ferry-maint-prune-default-29000000',
              bytesFreed: 1024,
              packsDeleted: 1,
              errorsFound: 0,
              staleLocksRemoved: 1,
              filesRetained: 2,
              message: 'pruned',
            },
          ],
        },
      ],
    },
    sync: { lastSyncTime: time, created: 2, deleted: 1, found: 5, message: 'namespace gone is not on this cluster' },
  },
};

export const fullUpload: DataUpload = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'DataUpload',
  metadata: { name: 'nightly', namespace: 'app', uid: '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0' },
  spec: {
    sourcePVC: 'data',
    backupStorageLocation: 'default',
    snapshotMoveData: true,
    csiSnapshot: { volumeSnapshot: 'data-snap', snapshotClass: 'csi-snapclass', deleteWhenDone: true },
    dataMover: 'ferry',
    operationTimeout: '10m',
    cancel: false,
    tags: { team: 'payments' },
    expire: '720h',
  },
  status: {
    ...common,
    phase: 'Completed',
    snapshotID: id,
    parentSnapshotID: id,
    changeTracking: {
      driver: 'local.csi.ferry.dev',
      snapshotHandle: 'snap-1',
      retainedContent: 'snapcontent-1',
      mode: 'Changed',
      bytesRead: 4096,
      reason: 'why',
    },
    volumeSnapshot: 'data-snap',
    volumeMode: 'Filesystem',
    storageClassName: 'fast',
    copies: [
      {
        backupStorageLocation: 'site-b',
        dataCopy: 'nightly-3f2a9c1d',
        phase: 'Completed',
        snapshotID: id,
        completionTimestamp: time,
        message: 'copied',
      },
    ],
  },
};

export const fullDownload: DataDownload = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'DataDownload',
  metadata: { name: 'restore', namespace: 'other', uid: '1f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0' },
  spec: {
    targetPVC: {
      name: 'data',
      storageClassName: 'fast',
      size: '10Gi',
      accessModes: ['ReadWriteOnce'],
      zeroedVolume: true,
      awaitClaim: true,
    },
    backupStorageLocation: 'default',
    source: { dataUpload: { name: 'nightly', namespace: 'app' } },
    sourceNamespace: 'app',
    dataMover: '',
    operationTimeout: '1h30m',
    cancel: false,
  },
  status: { ...common, phase: 'InProgress', snapshotID: id },
};

const hooks: AppBackupHooks = {
  pre: [
    {
      name: 'flush',
      selector: {
        matchLabels: { app: 'db' },
        matchExpressions: [{ key: 'role', operator: 'In', values: ['primary'] }],
      },
      container: 'postgres',
      command: ['psql', '-c', 'CHECKPOINT'],
      timeout: '30s',
      onError: 'Fail',
    },
  ],
  post: [
    {
      name: 'resume',
      selector: {
        matchLabels: { app: 'db' },
        matchExpressions: [{ key: 'role', operator: 'NotIn', values: ['replica'] }],
      },
      container: 'postgres',
      command: ['true'],
      timeout: '1m',
      onError: 'Continue',
    },
  ],
};

export const fullSchedule: BackupSchedule = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'BackupSchedule',
  metadata: { name: 'nightly', namespace: 'app', uid: '2f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0', generation: 2 },
  spec: {
    schedule: '30 2 * * *',
    timeZone: 'Europe/Berlin',
    pvcs: ['data'],
    selector: {
      matchLabels: { backup: 'nightly' },
      matchExpressions: [{ key: 'tier', operator: 'In', values: ['db'] }],
    },
    backupStorageLocation: 'default',
    snapshotMoveData: true,
    expire: '720h',
    retention: { keepLast: 3, keepHourly: 24, keepDaily: 7, keepWeekly: 4, keepMonthly: 12, keepYearly: 2 },
    suspend: false,
    concurrencyPolicy: 'Forbid',
    jitter: '5m',
    appBackup: {
      hooks,
      freeze: true,
      volumeGroupSnapshotClassName: 'csi-group',
      volumeSnapshotClassName: 'csi-snapclass',
    },
  },
  status: {
    observedGeneration: 2,
    cronJob: 'ferry-schedule-nightly',
    lastScheduleTime: time,
    lastSuccessfulTime: time,
    nextScheduleTime: time,
    missedRuns: 1,
    lastRun: {
      run: '202503011000',
      scheduledTime: time,
      outcome: 'Succeeded',
      message: 'all completed',
      pvcs: [{ pvc: 'data', dataUpload: 'nightly-data-202503011000', phase: 'Completed', message: 'done' }],
      deleted: ['nightly-data-202502011000'],
    },
    conditions: [condition],
  },
};

export const fullAppBackup: AppBackup = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'AppBackup',
  metadata: { name: 'db', namespace: 'app', uid: '3f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0' },
  spec: {
    pvcs: ['data', 'wal'],
    selector: { matchLabels: { app: 'db' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['cache'] }] },
    backupStorageLocation: 'default',
    hooks,
    freeze: true,
    volumeGroupSnapshotClassName: 'csi-group',
    volumeSnapshotClassName: 'csi-snapclass',
    operationTimeout: '10m',
    cancel: false,
    expire: '720h',
    tags: { team: 'payments' },
  },
  status: {
    phase: 'Completed',
    message: 'all volumes stored',
    consistency: 'Group',
    volumeGroupSnapshot: 'ferry-app-3f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0',
    snapshotTime: time,
    hooksStarted: true,
    hooks: [
      {
        stage: 'pre',
        hook: 'flush',
        pod: 'db-0',
        container: 'postgres',
        outcome: 'Succeeded',
        exitCode: 0,
        output: 'CHECKPOINT',
        startTime: time,
        endTime: time,
      },
    ],
    frozen: [{ pod: 'db-0', container: 'postgres', pvc: 'data', mountPath: '/var/lib/postgresql' }],
    volumes: [
      {
        pvc: 'data',
        volumeSnapshot: 'snapshot-data',
        dataUpload: 'db-data',
        phase: 'Completed',
        bytesDone: 100,
        totalBytes: 100,
        snapshotID: id,
        message: 'done',
      },
    ],
    volumesDone: '1/1',
    bytesDone: 100,
    totalBytes: 100,
    startTimestamp: time,
    completionTimestamp: time,
    conditions: [condition],
  },
};

export const fullAppRestore: AppRestore = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'AppRestore',
  metadata: { name: 'db-back', namespace: 'other', uid: '4f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0' },
  spec: {
    appBackup: { name: 'db', namespace: 'app' },
    volumes: ['data'],
    pvcNames: { data: 'data-restored' },
    storageClassName: 'fast',
    operationTimeout: '1h',
    cancel: false,
  },
  status: {
    phase: 'InProgress',
    message: 'restoring',
    volumes: [
      {
        pvc: 'data',
        targetPVC: 'data-restored',
        dataDownload: 'db-back-data',
        phase: 'InProgress',
        bytesDone: 50,
        totalBytes: 100,
        message: 'moving',
      },
    ],
    volumesDone: '0/1',
    startTimestamp: time,
    completionTimestamp: time,
    conditions: [condition],
  },
};
