// --wait against a scripted apiserver: the end phase becomes the outcome (Completed returns, Failed and a deleted
// resource fail, Canceled is CanceledError), and an apiserver briefly unreachable is waited out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { progressFigures, waitForEnd } from '../../src/cli/kube/wait.ts';
import { CanceledError } from '../../src/cli/run.ts';
import { KubeError } from '../../src/shared/kube/errors.ts';
import type { Kube } from '../../src/shared/kube/kube.ts';

type Answer = { phase: string; message?: string } | 'gone' | Error;

function scripted(answers: Answer[]): Kube & { asked: number } {
  const k = {
    asked: 0,
    async get() {
      const a = answers[Math.min(k.asked++, answers.length - 1)];
      if (a instanceof Error) throw a;
      if (a === 'gone') return undefined;
      return {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'DataUpload',
        metadata: { name: 'b', namespace: 'app' },
        spec: {},
        status: { phase: a.phase, message: a.message, progress: { bytesDone: 1, totalBytes: 2 } },
      };
    },
  };
  return k as unknown as Kube & { asked: number };
}

const wait = (kube: Kube) => waitForEnd(kube, 'DataUpload', 'app', 'b', { quiet: true, pollMs: 1 });

test('Completed returns the resource, after waiting out an unreachable apiserver', async () => {
  const kube = scripted([
    { phase: 'InProgress' },
    new KubeError(503, 'ServiceUnavailable', 'restarting'),
    Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    { phase: 'Finalizing' },
    { phase: 'Completed' },
  ]);
  const r = await wait(kube);
  assert.equal(r.status?.phase, 'Completed');
  assert.equal(kube.asked, 5);
});

test('Failed fails with the message, Canceled is a CanceledError, a deleted resource fails', async () => {
  await assert.rejects(
    wait(scripted([{ phase: 'Failing' }, { phase: 'Failed', message: 'The source PVC app/data does not exist.' }])),
    (e) =>
      e instanceof Error &&
      !(e instanceof CanceledError) &&
      e.message === 'DataUpload app/b failed: The source PVC app/data does not exist.',
  );
  await assert.rejects(
    wait(scripted([{ phase: 'Canceling' }, { phase: 'Canceled' }])),
    (e) => e instanceof CanceledError && e.message === 'DataUpload app/b was canceled.',
  );
  await assert.rejects(
    wait(scripted([{ phase: 'New' }, 'gone'])),
    (e) => e instanceof Error && /was deleted while waiting/.test(e.message),
  );
});

test('an error that is not transient (no rights) ends the wait at once', async () => {
  const forbidden = new KubeError(403, 'Forbidden', 'datauploads.ferry.dev "b" is forbidden');
  const kube = scripted([forbidden, { phase: 'Completed' }]);
  await assert.rejects(wait(kube), (e) => e === forbidden);
  assert.equal(kube.asked, 1);
});

test("--wait shows the step's status.progress.percent, and done over total only when the step wrote none", () => {
  assert.deepEqual(progressFigures({ bytesDone: 100, totalBytes: 100, percent: 99 }), {
    bytesDone: 100,
    bytesTotal: 100,
    totalsFinal: true,
    percent: 99,
  });
  assert.deepEqual(progressFigures({ bytesDone: 1, totalBytes: 4 }), {
    bytesDone: 1,
    bytesTotal: 4,
    totalsFinal: true,
    percent: undefined,
  });
  assert.deepEqual(progressFigures(undefined), { bytesDone: 0, bytesTotal: 0, totalsFinal: false, percent: undefined });
});
