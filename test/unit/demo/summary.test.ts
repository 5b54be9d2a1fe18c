// The demo's summary: per-step durations from status.steps, what deduplication saved, and a verdict that is
// "matches" only when both resources completed and no difference was found.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DataDownload, DataUpload } from '../../../src/shared/api/types.ts';
import { stepDurations, summaryLines, type Outcome } from '../../cluster/demo/summary.ts';

const step = (start: string, end: string) => ({
  attempts: 1,
  startTime: `2026-01-01T00:00:${start}Z`,
  endTime: `2026-01-01T00:00:${end}Z`,
});

const upload: DataUpload = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'DataUpload',
  metadata: { name: 'backup', namespace: 'demo-app-abc123', uid: 'u-1', creationTimestamp: '2026-01-01T00:00:00Z' },
  spec: { sourcePVC: 'data', backupStorageLocation: 'demo-abc123' },
  status: {
    phase: 'Completed',
    completionTimestamp: '2026-01-01T00:00:40Z',
    snapshotID: 'a'.repeat(64),
    steps: {
      transfer: step('10', '30'),
      snapshot: step('01', '04'),
      expose: step('05', '08'),
      finalize: step('31', '33'),
    },
    stats: { files: 3006, bytes: 100 << 20, bytesAdded: 60 << 20, bytesStored: 50 << 20, durationSeconds: 20 },
  },
};

const download: DataDownload = {
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'DataDownload',
  metadata: { name: 'restore', namespace: 'demo-restore-abc123', creationTimestamp: '2026-01-01T00:01:00Z' },
  spec: {
    targetPVC: { name: 'data' },
    backupStorageLocation: 'demo-abc123',
    source: { dataUpload: { name: 'backup', namespace: 'demo-app-abc123' } },
  },
  status: {
    phase: 'Completed',
    completionTimestamp: '2026-01-01T00:01:30Z',
    steps: { expose: step('01', '02') },
    stats: { files: 3009, bytes: 100 << 20, bytesAdded: 0, bytesStored: 0, durationSeconds: 9 },
  },
};

function outcome(over: Partial<Outcome> = {}): Outcome {
  return {
    scene: {
      id: 'abc123',
      appNamespace: 'demo-app-abc123',
      restoreNamespace: 'demo-restore-abc123',
      location: 'demo-abc123',
      pvc: 'data',
      volumePath: '/x',
    },
    sample: { files: 3006, bytes: 100 << 20, symlinks: 3 },
    upload,
    download,
    repository: 's3:http://127.0.0.1:9000/ferry/demo/abc123/demo-app-abc123',
    differences: [],
    kubeconfig: '/k/admin.kubeconfig',
    ...over,
  };
}

test('step durations come in the order the steps run, whatever order status lists them in', () => {
  assert.equal(stepDurations(upload), 'snapshot 3s, expose 3s, transfer 20s, finalize 2s');
  assert.equal(stepDurations(download), 'expose 1s');
});

test('a matching run says so, with the figures and where to look', () => {
  const lines = summaryLines(outcome());
  assert.ok(lines.includes('ferry demo: the restored volume matches the original.'));
  assert.ok(
    lines.includes(
      '  backup      DataUpload demo-app-abc123/backup Completed in 40s (snapshot 3s, expose 3s, transfer 20s, finalize 2s)',
    ),
  );
  assert.ok(
    lines.includes(`  snapshot    ${'a'.repeat(64)} in s3:http://127.0.0.1:9000/ferry/demo/abc123/demo-app-abc123`),
  );
  assert.ok(
    lines.includes(
      '  dedup       100.0 MiB read, 60.0 MiB new after deduplication, 50.0 MiB stored after compression (50% saved)',
    ),
  );
  assert.ok(
    lines.includes(
      '  restore     DataDownload demo-restore-abc123/restore Completed in 30s (expose 1s), 3009 files into PVC demo-restore-abc123/data',
    ),
  );
  assert.ok(lines.includes('  export KUBECONFIG=/k/admin.kubeconfig'));
  assert.ok(lines.some((l) => l.includes('ferry.dev/uid=u-1')));
});

test('a difference or an incomplete restore is a failure, and the differences are named', () => {
  const differing = summaryLines(outcome({ differences: ['"run.sh": mode 100755 != 100644'] }));
  assert.ok(differing.includes('ferry demo: FAILED, see below.'));
  assert.ok(differing.includes('  identical   NO, 1 difference(s): "run.sh": mode 100755 != 100644'));
  const failed = summaryLines(outcome({ download: { ...download, status: { ...download.status, phase: 'Failed' } } }));
  assert.ok(failed.includes('ferry demo: FAILED, see below.'));
});
