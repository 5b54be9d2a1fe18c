import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MaintenanceRun } from '../../../src/shared/api/types.ts';
import { issueText, validateFields } from '../../../src/shared/api/schemas.ts';
import { historyLimit, maintainedCondition, recordRun, worstOutcome } from '../../../src/steps/maintenance/history.ts';

const now = new Date('2026-03-01T12:00:00Z');

function run(i: number, over: Partial<MaintenanceRun> = {}): MaintenanceRun {
  return {
    task: 'prune',
    outcome: 'Succeeded',
    startTime: new Date(now.getTime() + i * 60_000).toISOString().replace('.000', ''),
    durationSeconds: i,
    ...over,
  };
}

test('keeps the latest runs per repository, newest first, bounded, and valid by the CRD schema', () => {
  let status = undefined;
  for (let i = 0; i < historyLimit + 5; i++) status = recordRun(status, 'app', run(i), now);
  status = recordRun(
    status,
    'other',
    run(99, { task: 'check', outcome: 'Skipped', message: 'a backup is in progress' }),
    now,
  );
  const repos = status!.maintenance!.repositories!;
  assert.deepEqual(
    repos.map((r) => r.namespace),
    ['app', 'other'],
  );
  assert.equal(repos[0].runs.length, historyLimit);
  assert.deepEqual(
    repos[0].runs.map((r) => r.durationSeconds),
    [14, 13, 12, 11, 10, 9, 8, 7, 6, 5],
  );
  assert.equal(status!.maintenance!.lastTask, 'check');
  assert.equal(status!.maintenance!.lastOutcome, 'Skipped');
  assert.equal(status!.maintenance!.lastRunTime, run(99).startTime);
  assert.deepEqual(validateFields('BackupStorageLocation', 'status', status).map(issueText), []);
});

test("the Maintained condition stays False while any repository's latest run failed", () => {
  let status = recordRun(
    undefined,
    'app',
    run(1, { task: 'check-data', outcome: 'Failed', errorsFound: 2, message: 'pack x is corrupted' }),
    now,
  );
  let c = status.conditions!.find((x) => x.type === maintainedCondition)!;
  assert.equal(c.status, 'False');
  assert.equal(c.reason, 'CheckDataFailed');
  assert.match(c.message, /namespace app failed: pack x is corrupted/);
  // a success elsewhere does not hide it
  status = recordRun(status, 'other', run(2), now);
  c = status.conditions!.find((x) => x.type === maintainedCondition)!;
  assert.equal(c.status, 'False');
  assert.match(c.message, /namespace app/);
  // the failing repository recovers
  status = recordRun(status, 'app', run(3, { task: 'check-data' }), now);
  c = status.conditions!.find((x) => x.type === maintainedCondition)!;
  assert.equal(c.status, 'True');
  assert.equal(c.reason, 'CheckDataSucceeded');
});

test('the worst outcome of a run over several repositories', () => {
  assert.equal(worstOutcome([]), 'Succeeded');
  assert.equal(worstOutcome(['Succeeded', 'Skipped']), 'Skipped');
  assert.equal(worstOutcome(['Skipped', 'Failed', 'Succeeded']), 'Failed');
});
