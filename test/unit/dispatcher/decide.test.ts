// What a resource needs next, by phase and by the state of its step Jobs.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decide } from '../../../src/shared/dispatch/decide.ts';
import type { DecideOptions } from '../../../src/shared/dispatch/decide.ts';
import type { StepJob } from '../../../src/shared/step-job/jobs.ts';
import type { Phase, StepName } from '../../../src/shared/api/types.ts';
import { download, upload } from './world.ts';

const now = Date.parse('2025-01-01T01:00:00Z');
const sweep: DecideOptions = { mode: 'sweep', maxAttempts: 3, now, settleMs: 10_000 };
const admission: DecideOptions = { ...sweep, mode: 'admission' };

function job(
  uid: string,
  step: StepName,
  attempt: number,
  state: StepJob['state'],
  finishedAt = now - 60_000,
): StepJob {
  return {
    name: `j-${step}-${attempt}`,
    uid,
    step,
    attempt,
    state,
    created: '',
    finishedAt: state === 'active' ? undefined : finishedAt,
    message: state === 'failed' ? 'BackoffLimitExceeded: Job has reached the specified backoff limit' : undefined,
  };
}

describe('decide, for a resource with no Jobs', () => {
  const table: [kind: 'up' | 'down', phase: Phase | undefined, step: StepName | undefined][] = [
    ['up', undefined, 'snapshot'],
    ['up', 'New', 'snapshot'],
    ['up', 'Accepted', 'expose'],
    ['up', 'Prepared', 'transfer'],
    ['up', 'InProgress', 'transfer'],
    ['up', 'Finalizing', 'finalize'],
    ['up', 'Failing', 'finalize'],
    ['up', 'Canceling', 'finalize'],
    ['up', 'Completed', undefined],
    ['up', 'Failed', undefined],
    ['up', 'Canceled', undefined],
    ['down', undefined, 'expose'],
    ['down', 'Prepared', 'transfer'],
    ['down', 'InProgress', 'transfer'],
    ['down', 'Finalizing', 'finalize'],
    ['down', 'Completed', undefined],
  ];
  for (const [kind, phase, step] of table) {
    it(`${kind === 'up' ? 'DataUpload' : 'DataDownload'} in ${phase ?? '(no phase)'} -> ${step ?? 'nothing'}`, () => {
      const r = kind === 'up' ? upload('x', phase) : download('x', phase);
      const d = decide(r, [], admission);
      if (step) assert.deepEqual(d, { action: 'run', step, attempt: 1 });
      else assert.equal(d.action, 'none');
    });
  }

  it('continues the attempt count the steps recorded', () => {
    const r = upload('x', 'Accepted', { status: { phase: 'Accepted', steps: { expose: { attempts: 2 } } } });
    assert.deepEqual(decide(r, [], sweep), { action: 'run', step: 'expose', attempt: 3 });
  });

  it('leaves resources of other data movers alone', () => {
    assert.equal(
      decide(
        upload('x', undefined, { spec: { sourcePVC: 'a', backupStorageLocation: 'b', dataMover: 'velero' } }),
        [],
        sweep,
      ).action,
      'none',
    );
  });
});

describe('decide, on cancel and deletion', () => {
  it('cancels a running resource whose spec.cancel is set', () => {
    const r = upload('x', 'InProgress', { spec: { sourcePVC: 'a', backupStorageLocation: 'b', cancel: true } });
    assert.deepEqual(decide(r, [], sweep), { action: 'cancel', why: 'spec.cancel is set' });
  });

  it('finalizes a Canceling resource instead of canceling it again', () => {
    const r = upload('x', 'Canceling', { spec: { sourcePVC: 'a', backupStorageLocation: 'b', cancel: true } });
    assert.deepEqual(decide(r, [], sweep), { action: 'run', step: 'finalize', attempt: 1 });
  });

  it('cancels a resource deleted mid-way, and runs the delete step once a DataUpload is done', () => {
    const deleted = (r: ReturnType<typeof upload>) => ({
      ...r,
      metadata: { ...r.metadata, deletionTimestamp: '2025-01-02T00:00:00Z' },
    });
    assert.equal(decide(deleted(upload('x', 'Prepared')), [], admission).action, 'cancel');
    const done = deleted(upload('x', 'Completed'));
    assert.equal(decide(done, [], admission).action, 'none', 'without the finalizer there is nothing to free');
    done.metadata.finalizers = ['ferry.dev/delete-repository-data'];
    assert.deepEqual(decide(done, [], admission), { action: 'run', step: 'delete', attempt: 1 });
    assert.equal(decide(deleted(download('x', 'Completed')), [], admission).action, 'none');
  });
});

describe('decide, with step Jobs', () => {
  const r = upload('x', 'Accepted');
  const uid = r.metadata.uid!;

  it('starts nothing at admission once the step has a Job, whatever its state', () => {
    for (const state of ['active', 'failed', 'succeeded'] as const)
      assert.equal(decide(r, [job(uid, 'expose', 1, state)], admission).action, 'none');
  });

  it('ignores Jobs of other steps and other resources', () => {
    assert.deepEqual(decide(r, [job(uid, 'snapshot', 1, 'succeeded'), job('other', 'expose', 4, 'failed')], sweep), {
      action: 'run',
      step: 'expose',
      attempt: 1,
    });
  });

  it('sweep: waits for a running Job and for one that has just finished', () => {
    assert.equal(decide(r, [job(uid, 'expose', 1, 'active')], sweep).action, 'none');
    assert.equal(decide(r, [job(uid, 'expose', 1, 'failed', now - 1000)], sweep).action, 'none');
  });

  it('sweep: retries a failed Job, and a Job that ended without moving the phase on, as the next attempt', () => {
    assert.deepEqual(decide(r, [job(uid, 'expose', 1, 'failed')], sweep), {
      action: 'run',
      step: 'expose',
      attempt: 2,
    });
    assert.deepEqual(decide(r, [job(uid, 'expose', 1, 'failed'), job(uid, 'expose', 2, 'succeeded')], sweep), {
      action: 'run',
      step: 'expose',
      attempt: 3,
    });
  });

  it('sweep: gives up after the last attempt, saying why', () => {
    const failed = [1, 2, 3].map((a) => job(uid, 'expose', a, 'failed'));
    assert.deepEqual(decide(r, failed, sweep), {
      action: 'fail',
      step: 'expose',
      phase: 'Failing',
      message:
        'step expose failed 3 times; the last attempt (Job j-expose-3) said: BackoffLimitExceeded: Job has reached the specified backoff limit',
    });
    const idle = [1, 2, 3].map((a) => job(uid, 'expose', a, 'succeeded'));
    assert.equal(
      (decide(r, idle, sweep) as { message: string }).message,
      'step expose ran 3 times without moving the DataUpload on from phase Accepted',
    );
  });

  it('sweep: prefers the failure the step recorded', () => {
    const recorded = upload('x', 'Accepted', {
      status: {
        phase: 'Accepted',
        steps: { expose: { attempts: 3, outcome: 'Failed', message: 'the snapshot class does not exist' } },
      },
    });
    const failed = [1, 2, 3].map((a) => job(recorded.metadata.uid!, 'expose', a, 'failed'));
    assert.match(
      (decide(recorded, failed, sweep) as { message: string }).message,
      /said: the snapshot class does not exist$/,
    );
  });

  it("sweep: after crashes, says the Job failure first and the step's last note after it", () => {
    const noted = upload('z', 'Accepted', {
      status: {
        phase: 'Accepted',
        steps: { expose: { attempts: 3, outcome: 'Succeeded', message: 'Exposing the snapshot.' } },
      },
    });
    const failed = [1, 2, 3].map((a) => job(noted.metadata.uid!, 'expose', a, 'failed'));
    assert.match(
      (decide(noted, failed, sweep) as { message: string }).message,
      /said: BackoffLimitExceeded: Job has reached the specified backoff limit; the step had last reported: Exposing the snapshot\.$/,
    );
  });

  it('sweep: ends in Failed when finalize itself cannot finish, and retries delete for ever', () => {
    const f = upload('y', 'Finalizing');
    assert.equal(
      (
        decide(
          f,
          [1, 2, 3].map((a) => job(f.metadata.uid!, 'finalize', a, 'failed')),
          sweep,
        ) as { phase: string }
      ).phase,
      'Failed',
    );
    const gone = upload('z', 'Completed', {
      metadata: {
        name: 'z',
        namespace: 'app',
        uid: 'u-z',
        deletionTimestamp: '2025-01-01T00:00:00Z',
        finalizers: ['ferry.dev/delete-repository-data'],
      },
    });
    assert.deepEqual(
      decide(
        gone,
        [1, 2, 3, 4].map((a) => job('u-z', 'delete', a, 'failed')),
        sweep,
      ),
      { action: 'run', step: 'delete', attempt: 5 },
    );
  });
});
