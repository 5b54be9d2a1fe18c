// `logs` for a step whose Job is gone (finalize removes the transfer Jobs at once): a header naming the Job and why it
// is gone, then a summary from what status kept: the step record, the transfer's stats, the dispatcher's message.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { removedStepLines } from '../../src/cli/kube/removed-step.ts';
import type { Resource } from '../../src/cli/kube/kinds.ts';
import type { JobRun } from '../../src/cli/kube/step-jobs.ts';
import { uploadWith } from '../support/cli-upload.ts';

const transferJob = 'ferry-up-0123456789abcdef-transfer-1';

function upload(status: Record<string, unknown>): Resource {
  return uploadWith(status, { namespace: 'app' });
}

const transferRecord = {
  attempts: 1,
  job: transferJob,
  startTime: '2026-01-01T00:00:10Z',
  endTime: '2026-01-01T00:02:40Z',
  outcome: 'Succeeded',
  message: 'Backed up 8 file(s), 134217728 bytes, into snapshot 1a2b3c4d; 134217728 bytes were new.',
};

const job = (step: string): JobRun =>
  ({
    name: `ferry-up-0123456789abcdef-${step}-1`,
    uid: 'u',
    step,
    attempt: 1,
    state: 'succeeded',
    created: '2026-01-01T00:00:00Z',
    pods: [],
  }) as JobRun;

test('a completed transfer whose Job finalize removed: its record and its stats', () => {
  const r = upload({
    phase: 'Completed',
    node: 'node-2',
    steps: { transfer: transferRecord },
    stats: { files: 8, bytes: 134217728, bytesAdded: 134217728, bytesStored: 134300000, durationSeconds: 148.2 },
  });
  assert.deepEqual(removedStepLines(r, [job('snapshot'), job('finalize')], 'transfer'), [
    `==> transfer attempt 1: Job ${transferJob} removed after completion (its pod held the exposed volume) <==`,
    'its summary: ended at 2026-01-01T00:02:40Z after 2m30s: Backed up 8 file(s), 134217728 bytes, into snapshot 1a2b3c4d; 134217728 bytes were new; 8 files, 128.0 MiB read, 128.0 MiB new, 128.1 MiB stored, in 148.2s on node node-2',
  ]);
});

test('a transfer the dispatcher gave up on: its message, not the record written when the transfer started', () => {
  const r = upload({
    phase: 'Failed',
    message: `Backup failed. step transfer failed 3 times; the last attempt (Job ${transferJob}) said: The repository is locked.`,
    steps: {
      transfer: {
        ...transferRecord,
        attempts: 3,
        endTime: '2026-01-01T00:00:11Z',
        message: 'Moving the data on node n1.',
      },
    },
  });
  assert.deepEqual(removedStepLines(r, [], 'transfer'), [
    `==> transfer attempt 3: Job ${transferJob} removed after completion (its pod held the exposed volume) <==`,
    `its summary: Backup failed. step transfer failed 3 times; the last attempt (Job ${transferJob}) said: The repository is locked; no data moved`,
  ]);
});

test('a step whose Job is still there, or that never ran, gets no summary (its log is printed instead)', () => {
  const r = upload({
    phase: 'Completed',
    steps: { transfer: transferRecord, snapshot: { attempts: 1, job: 'ferry-up-0123456789abcdef-snapshot-1' } },
  });
  assert.deepEqual(removedStepLines(r, [job('transfer')], 'transfer'), []);
  assert.deepEqual(removedStepLines(r, [job('snapshot')], 'snapshot'), []);
  assert.deepEqual(removedStepLines(r, [], 'delete'), []);
});

test("another step's Job expired: it says so, with its record", () => {
  const r = upload({
    phase: 'Completed',
    steps: {
      snapshot: {
        attempts: 2,
        job: 'ferry-up-0123456789abcdef-snapshot-2',
        startTime: '2026-01-01T00:00:00Z',
        endTime: '2026-01-01T00:00:05Z',
        outcome: 'Succeeded',
        message: 'snapshot ready.',
      },
    },
  });
  assert.deepEqual(removedStepLines(r, [], 'snapshot'), [
    '==> snapshot attempt 2: Job ferry-up-0123456789abcdef-snapshot-2 removed an hour after it ended <==',
    'its summary: ended at 2026-01-01T00:00:05Z after 5s: snapshot ready',
  ]);
});
