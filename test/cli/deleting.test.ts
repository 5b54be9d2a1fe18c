// A backup being deleted while a restore reads it keeps its finalizer and its phase: `get` and `describe` say it
// is being deleted and what that waits for, not just Completed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { columnsFor, phaseOf } from '../../src/cli/kube/columns.ts';
import { uploadWith } from '../support/cli-upload.ts';

const reading = 'Waiting: DataDownload app/r1 is reading this backup; the finalizer stays and the sweep tries again.';

test('a backup being deleted while a restore reads it shows Deleting and the restore, without -o wide', () => {
  const r = uploadWith(
    {
      phase: 'Completed',
      message: reading,
      conditions: [{ type: 'RepositoryDataDeleted', status: 'False', reason: 'RestoreReading', message: reading }],
    },
    { deletionTimestamp: '2026-01-01T00:00:00Z' },
  );
  assert.equal(phaseOf(r), 'Deleting (waits for restore app/r1)');
  const shown = columnsFor('DataUpload', false).filter((c) => !c.wide);
  assert.equal(shown.find((c) => c.header === 'phase')?.value(r), 'Deleting (waits for restore app/r1)');
});

test('a backup being deleted otherwise says so with the phase it had; one not being deleted shows its phase', () => {
  const r = uploadWith({ phase: 'Completed' }, { deletionTimestamp: '2026-01-01T00:00:00Z' });
  assert.equal(phaseOf(r), 'Deleting (was Completed)');
  assert.equal(phaseOf(uploadWith({ phase: 'Completed' })), 'Completed');
});
