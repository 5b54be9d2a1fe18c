// A DataCopy and a CopyPolicy with every field set, typed by src/shared/api/copy.ts (see ./fixtures.ts for why).
import type { CopyPolicy, DataCopy } from '../../../src/shared/api/copy.ts';
import { condition, time } from './fixtures.ts';

const id = 'b'.repeat(64);
const copied = { ...condition, type: 'Copied', status: 'True' as const, reason: 'Completed', message: 'copied' };

export const fullDataCopy: DataCopy = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'DataCopy',
  metadata: { name: 'nightly-3f2a9c1d', namespace: 'app', uid: '5f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0' },
  spec: {
    dataUpload: 'nightly',
    backupStorageLocation: 'site-b',
    policy: 'to-site-b',
    expire: '720h',
    operationTimeout: '1h',
    cancel: false,
  },
  status: {
    phase: 'Completed',
    sourceSnapshotID: 'a'.repeat(64),
    snapshotID: id,
    startTimestamp: time,
    completionTimestamp: time,
    attempts: 2,
    nextAttemptTime: time,
    job: 'ferry-copy-5f1e2d3c4b5a6978-a2',
    progress: { bytesDone: 100, totalBytes: 100, percent: 100 },
    stats: { blobs: 12, bytesSent: 4096, durationSeconds: 3.5 },
    message: 'copied',
    conditions: [copied],
  },
};

export const fullCopyPolicy: CopyPolicy = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'CopyPolicy',
  metadata: { name: 'to-site-b', namespace: 'ferry-system', generation: 3 },
  spec: {
    sourceLocation: 'default',
    destinationLocation: 'site-b',
    namespaces: ['app'],
    selector: { matchLabels: { tier: 'db' }, matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] },
    schedules: ['nightly', 'app/hourly'],
    expire: '2160h',
    suspend: false,
  },
  status: {
    observedGeneration: 3,
    copiesCompleted: 7,
    lastCopyTime: time,
    copiesRetrying: 1,
    conditions: [{ ...copied, type: 'Ready', reason: 'Copying', message: '7 copies made' }],
  },
};
