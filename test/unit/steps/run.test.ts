import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { FerryResource, Phase, StepName } from '../../../src/shared/api/types.ts';
import { finalizerName } from '../../../src/shared/api/phases.ts';
import { KubeError } from '../../../src/shared/kube/errors.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import type { Outcome, Step } from '../../../src/steps/context.ts';
import { StepFailure } from '../../../src/steps/data/failure.ts';
import { runOne, runSweep } from '../../../src/steps/data/run.ts';
import { dataDownload, dataUpload, eventsOf, harness } from './harness.ts';

const ran: Outcome = { outcome: 'Advanced', reason: 'ran' };

function recording(result: () => Promise<Outcome> = async () => ran): { step: Step; calls: FerryResource[] } {
  const calls: FerryResource[] = [];
  return {
    calls,
    step: async (_ctx, r) => {
      calls.push(r);
      return result();
    },
  };
}

// The design's phase machine, written out independently of src/shared/api/phases.ts.
const steps: StepName[] = ['snapshot', 'expose', 'transfer', 'finalize', 'delete'];
const uploadTable: Record<Phase, StepName | undefined> = {
  New: 'snapshot',
  Accepted: 'expose',
  Prepared: 'transfer',
  InProgress: 'transfer',
  Finalizing: 'finalize',
  Failing: 'finalize',
  Canceling: 'finalize',
  Completed: undefined,
  Failed: undefined,
  Canceled: undefined,
};
const downloadTable: Record<Phase, StepName | undefined> = { ...uploadTable, New: 'expose', Accepted: undefined };

for (const [kind, table] of [
  ['DataUpload', uploadTable],
  ['DataDownload', downloadTable],
] as const) {
  test(`${kind}: each phase runs exactly its own step; the others wait briefly and do nothing`, async () => {
    for (const phase of Object.keys(table) as Phase[]) {
      for (const step of steps) {
        const h = harness(step);
        const r = kind === 'DataUpload' ? dataUpload({}, { phase }) : dataDownload({}, { phase });
        h.kube.seed(r);
        const rec = recording();
        const started = h.clock.ms;
        const out = await runOne(h.ctx, rec.step, { kind, namespace: r.metadata.namespace!, name: r.metadata.name });
        const due = table[phase] === step;
        assert.equal(rec.calls.length, due ? 1 : 0, `${kind} ${phase} ${step}`);
        assert.equal(out.outcome, due ? 'Advanced' : 'Skipped', `${kind} ${phase} ${step}`);
        if (!due) assert.ok(h.clock.ms - started >= h.ctx.settings.phaseWaitMs, 'waited before giving up');
      }
    }
  });
}

test('delete is due only for a DataUpload being deleted, in a terminal phase, with the finalizer', async () => {
  const cases: { phase: Phase; deleting: boolean; finalizer: boolean; due: boolean }[] = [
    { phase: 'Completed', deleting: true, finalizer: true, due: true },
    { phase: 'Failed', deleting: true, finalizer: true, due: true },
    { phase: 'Canceled', deleting: true, finalizer: true, due: true },
    { phase: 'Completed', deleting: false, finalizer: true, due: false },
    { phase: 'Completed', deleting: true, finalizer: false, due: false },
    { phase: 'InProgress', deleting: true, finalizer: true, due: false },
  ];
  for (const c of cases) {
    const h = harness('delete', { phaseWaitMs: 0 });
    const r = dataUpload({}, { phase: c.phase });
    r.metadata.finalizers = c.finalizer ? [finalizerName] : [];
    if (c.deleting) r.metadata.deletionTimestamp = '2026-03-01T11:00:00Z';
    h.kube.seed(r);
    const rec = recording();
    await runOne(h.ctx, rec.step, { kind: 'DataUpload', namespace: 'app', name: 'du-1' });
    assert.equal(rec.calls.length, c.due ? 1 : 0, JSON.stringify(c));
  }
});

test('a step started before its phase is visible runs once the phase arrives', async () => {
  const h = harness('expose');
  h.kube.seed(dataUpload({}, { phase: 'New' }));
  let gets = 0;
  h.kube.on('get', 'DataUpload', (_o, k) => {
    if (++gets === 2)
      k.mutate({ kind: 'DataUpload', namespace: 'app', name: 'du-1' }, (o) => {
        (o.status as { phase: Phase }).phase = 'Accepted';
      });
  });
  const rec = recording();
  assert.equal(
    (await runOne(h.ctx, rec.step, { kind: 'DataUpload', namespace: 'app', name: 'du-1' })).outcome,
    'Advanced',
  );
  assert.equal(rec.calls[0].status?.phase, 'Accepted');
});

test('a missing resource, or one for another data mover, is left alone', async () => {
  const h = harness('snapshot');
  h.kube.seed(dataUpload({ dataMover: 'velero' }, { phase: 'New' }));
  const rec = recording();
  assert.match(
    (await runOne(h.ctx, rec.step, { kind: 'DataUpload', namespace: 'app', name: 'du-1' })).reason,
    /data mover "velero"/,
  );
  assert.match(
    (await runOne(h.ctx, rec.step, { kind: 'DataUpload', namespace: 'app', name: 'nope' })).reason,
    /does not exist/,
  );
  assert.equal(rec.calls.length, 0);
});

test('cancel or deletion before finalize moves the resource to Canceling instead of running the step', async () => {
  for (const [phase, step, deleting] of [
    ['New', 'snapshot', false],
    ['Accepted', 'expose', false],
    ['InProgress', 'transfer', true],
  ] as const) {
    const h = harness(step);
    const r = dataUpload({ cancel: !deleting }, { phase });
    if (deleting) {
      r.metadata.deletionTimestamp = '2026-03-01T11:00:00Z';
      r.metadata.finalizers = [finalizerName];
    }
    h.kube.seed(r);
    const rec = recording();
    const out = await runOne(h.ctx, rec.step, { kind: 'DataUpload', namespace: 'app', name: 'du-1' });
    assert.equal(out.outcome, 'Canceled');
    assert.equal(rec.calls.length, 0);
    const after = h.kube.peek<FerryResource & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'du-1' })!;
    assert.equal(after.status?.phase, 'Canceling');
    assert.deepEqual(
      eventsOf(h.kube).map((e) => e.reason),
      ['Canceling'],
    );
  }
});

test('a cancel that comes during Finalizing is too late: finalize completes', async () => {
  const h = harness('finalize');
  h.kube.seed(dataUpload({ cancel: true }, { phase: 'Finalizing' }));
  const rec = recording();
  await runOne(h.ctx, rec.step, { kind: 'DataUpload', namespace: 'app', name: 'du-1' });
  assert.equal(rec.calls.length, 1);
});

test('a permanent failure becomes phase Failing with the message, a Warning and the step record', async () => {
  const h = harness('snapshot');
  h.kube.seed(dataUpload({}, { phase: 'New' }));
  const rec = recording(async () => {
    throw new StepFailure('SourcePVCNotFound', 'The source PVC app/data does not exist.');
  });
  const out = await runOne(h.ctx, rec.step, { kind: 'DataUpload', namespace: 'app', name: 'du-1' });
  assert.equal(out.outcome, 'Failed');
  const s = h.kube.peek<FerryResource & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'du-1' })!.status!;
  assert.equal(s.phase, 'Failing');
  assert.equal(s.message, 'The source PVC app/data does not exist.');
  assert.equal(s.steps?.snapshot?.outcome, 'Failed');
  assert.equal(s.steps?.snapshot?.job, 'ferry-up-abc-snapshot-1');
  assert.deepEqual(
    s.conditions?.map((c) => [c.type, c.status, c.reason]),
    [['Succeeded', 'False', 'SourcePVCNotFound']],
  );
  assert.deepEqual(eventsOf(h.kube), [
    { reason: 'SourcePVCNotFound', type: 'Warning', note: 'The source PVC app/data does not exist.' },
  ]);
});

test('a transient error is thrown for the Job to retry and leaves the phase alone', async () => {
  const h = harness('snapshot');
  h.kube.seed(dataUpload({}, { phase: 'New' }));
  const rec = recording(async () => {
    throw new KubeError(503, 'ServiceUnavailable', 'apiserver down');
  });
  await assert.rejects(
    runOne(h.ctx, rec.step, { kind: 'DataUpload', namespace: 'app', name: 'du-1' }),
    /apiserver down/,
  );
  assert.equal(
    h.kube.peek<FerryResource & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'du-1' })!.status?.phase,
    'New',
  );
});

test('finalize failing for good during a cleanup (Failing, Canceling) ends in Failed', async () => {
  const h = harness('finalize');
  h.kube.seed(dataUpload({}, { phase: 'Canceling' }));
  const rec = recording(async () => {
    throw new StepFailure('Broken', 'The restored volume is gone.');
  });
  await runOne(h.ctx, rec.step, { kind: 'DataUpload', namespace: 'app', name: 'du-1' });
  const s = h.kube.peek<FerryResource & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'du-1' })!.status!;
  assert.equal(s.phase, 'Failed');
  assert.ok(s.completionTimestamp);
});

test('a sweep runs the step for every due resource and counts the errors without stopping', async () => {
  const h = harness('finalize');
  const due1 = dataUpload({}, { phase: 'Failing' });
  const due2 = { ...dataDownload({}, { phase: 'Canceling' }) };
  const notDue = dataUpload({}, { phase: 'InProgress' });
  notDue.metadata = { ...notDue.metadata, name: 'du-2', uid: 'other' };
  const other = dataUpload({ dataMover: 'velero' }, { phase: 'Failing' });
  other.metadata = { ...other.metadata, name: 'du-3', uid: 'third' };
  h.kube.seed(due1, due2, notDue, other);
  const seen: string[] = [];
  const out = await runSweep({ ...h.ctx, sweep: true }, async (_ctx, r) => {
    seen.push(r.metadata.name);
    if (r.kind === 'DataUpload') throw new Error('boom');
    return ran;
  });
  assert.deepEqual(seen.sort(), ['dd-1', 'du-1']);
  assert.deepEqual(out.counters, { due: 2, advanced: 1, failed: 0, skipped: 0, errors: 1 });
  assert.equal((await runSweep({ ...h.ctx, step: 'transfer', sweep: true }, recording().step)).outcome, 'Skipped');
});
