// Retention of a schedule's AppBackups as a pure plan: one group for the whole schedule (an AppBackup of several
// volumes counts once), only Completed ones counted, and an AppBackup spared while an unfinished AppRestore names it
// or an unfinished DataDownload reads one of its volumes' DataUploads; a finished restore spares nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AppBackup, AppRestore } from '../../../src/shared/api/app.ts';
import type { DataDownload } from '../../../src/shared/api/types.ts';
import { planAppRetention } from '../../../src/shared/retention/app-plan.ts';

function backup(hour: number, phase: 'Completed' | 'Failed' = 'Completed'): AppBackup {
  const name = `nightly-app-2025030100${String(hour).padStart(2, '0')}`;
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'AppBackup',
    metadata: {
      name,
      namespace: 'app',
      annotations: { 'ferry.dev/scheduled-time': `2025-03-01T${String(hour).padStart(2, '0')}:00:00Z` },
    },
    spec: { pvcs: ['data', 'wal'], backupStorageLocation: 'default' },
    status: {
      phase,
      volumes: ['data', 'wal'].map((pvc) => ({ pvc, dataUpload: `${name}-${pvc}`, phase: 'Completed' as const })),
    },
  };
}

function restore(of: string, phase: NonNullable<AppRestore['status']>['phase']): AppRestore {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'AppRestore',
    metadata: { name: 'back', namespace: 'app' },
    spec: { appBackup: { name: of } },
    status: { phase },
  };
}

function download(dataUpload: string, phase: 'InProgress' | 'Completed'): DataDownload {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataDownload',
    metadata: { name: 'dd', namespace: 'app' },
    spec: { targetPVC: { name: 'x' }, backupStorageLocation: 'default', source: { dataUpload: { name: dataUpload } } },
    status: { phase },
  };
}

const backups = [backup(4), backup(3), backup(2, 'Failed'), backup(1)];
const plan = (restores: AppRestore[], downloads: DataDownload[]) =>
  planAppRetention(backups, restores, downloads, { keepLast: 1 }, 'UTC');

test('keepLast counts AppBackups, not volumes, and only Completed ones', () => {
  const p = plan([], []);
  assert.deepEqual(
    p.delete.map((b) => b.metadata.name),
    ['nightly-app-202503010003', 'nightly-app-202503010001'],
  );
  assert.deepEqual(p.spared, []);
});

test('an unfinished AppRestore or DataDownload reading an AppBackup spares it; a finished one does not', () => {
  const byRestore = plan([restore('nightly-app-202503010003', 'InProgress')], []);
  assert.deepEqual(byRestore.spared, [{ name: 'nightly-app-202503010003', why: 'AppRestore app/back is reading it' }]);
  const byDownload = plan([], [download('nightly-app-202503010001-wal', 'InProgress')]);
  assert.deepEqual(byDownload.spared, [{ name: 'nightly-app-202503010001', why: 'DataDownload app/dd is reading it' }]);
  const finished = plan(
    [restore('nightly-app-202503010003', 'Completed')],
    [download('nightly-app-202503010001-wal', 'Completed')],
  );
  assert.equal(finished.delete.length, 2);
});
