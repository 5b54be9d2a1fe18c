import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DataUpload } from '../../../src/shared/api/types.ts';
import { finalizerName } from '../../../src/shared/api/phases.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import type { MemoryKube } from '../../../src/shared/kube/memory.ts';
import type { VolumeSnapshot } from '../../../src/shared/kube/objects.ts';
import { runOne } from '../../../src/steps/data/run.ts';
import { snapshot } from '../../../src/steps/data/snapshot.ts';
import { parseDuration } from '../../../src/shared/api/duration.ts';
import { dataUpload, eventsOf, harness, pvc } from './harness.ts';

const ref = { kind: 'DataUpload' as const, namespace: 'app', name: 'du-1' };
const du = (k: MemoryKube) => k.peek<DataUpload & KubeObject>(ref)!;

/** Stands in for the snapshot controller: a snapshot becomes ready after `afterGets` looks at it. */
function readyAfter(kube: MemoryKube, afterGets: number, restoreSize = '1Gi'): void {
  let gets = 0;
  kube.on('get', 'VolumeSnapshot', (vs, k) => {
    if (++gets === afterGets)
      k.mutate({ kind: 'VolumeSnapshot', namespace: vs.metadata.namespace, name: vs.metadata.name }, (o) => {
        o.status = { readyToUse: true, restoreSize, boundVolumeSnapshotContentName: 'snapcontent-1' };
      });
  });
}

test('takes a labelled VolumeSnapshot of the PVC, waits until it is ready, records it and moves to Accepted', async () => {
  const h = harness('snapshot');
  h.kube.seed(
    dataUpload({ csiSnapshot: { snapshotClass: 'csi-snaps' } }, { phase: 'New' }),
    pvc('app', 'data', { volumeMode: 'Block' }),
  );
  readyAfter(h.kube, 3);
  const out = await runOne(h.ctx, snapshot, ref);
  assert.equal(out.outcome, 'Advanced');
  const [vs] = h.kube.all('VolumeSnapshot') as VolumeSnapshot[];
  assert.equal(vs.metadata.name, 'ferry-0b7c7a2e-1111-4c3e-9f00-000000000001');
  assert.equal(vs.metadata.namespace, 'app');
  assert.deepEqual(vs.spec, { source: { persistentVolumeClaimName: 'data' }, volumeSnapshotClassName: 'csi-snaps' });
  assert.equal(vs.metadata.labels?.['ferry.dev/uid'], '0b7c7a2e-1111-4c3e-9f00-000000000001');
  const after = du(h.kube);
  assert.equal(after.status?.phase, 'Accepted');
  assert.equal(after.status?.volumeSnapshot, vs.metadata.name);
  assert.equal(after.status?.volumeMode, 'Block');
  // recorded for a restore's default class, which must outlive the source PVC
  assert.equal(after.status?.storageClassName, 'fast');
  assert.deepEqual(after.metadata.finalizers, [finalizerName]);
  assert.equal(after.status?.conditions?.[0].type, 'SnapshotReady');
  assert.deepEqual(
    eventsOf(h.kube).map((e) => [e.reason, e.type]),
    [['SnapshotReady', 'Normal']],
  );
});

test('snapshotMoveData false goes straight to Finalizing and needs no finalizer', async () => {
  const h = harness('snapshot');
  h.kube.seed(dataUpload({ snapshotMoveData: false }, { phase: 'New' }), pvc('app', 'data'));
  readyAfter(h.kube, 1);
  await runOne(h.ctx, snapshot, ref);
  assert.equal(du(h.kube).status?.phase, 'Finalizing');
  assert.equal(du(h.kube).metadata.finalizers, undefined);
  assert.equal(du(h.kube).status?.volumeMode, 'Filesystem');
});

test('a snapshot named in spec.csiSnapshot is used, not created', async () => {
  const h = harness('snapshot');
  h.kube.seed(dataUpload({ csiSnapshot: { volumeSnapshot: 'nightly' } }, { phase: 'New' }), pvc('app', 'data'), {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name: 'nightly', namespace: 'app' },
    spec: { source: { persistentVolumeClaimName: 'data' } },
    status: { readyToUse: true },
  });
  await runOne(h.ctx, snapshot, ref);
  assert.equal(h.kube.actions.filter((a) => a.verb === 'create' && a.kind === 'VolumeSnapshot').length, 0);
  assert.equal(du(h.kube).status?.volumeSnapshot, 'nightly');
});

test('running again after a crash reuses the snapshot it made (AlreadyExists is success)', async () => {
  const h = harness('snapshot');
  h.kube.seed(dataUpload({}, { phase: 'New' }), pvc('app', 'data'));
  readyAfter(h.kube, 1);
  h.kube.seed({
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name: 'ferry-0b7c7a2e-1111-4c3e-9f00-000000000001', namespace: 'app' },
    spec: { source: { persistentVolumeClaimName: 'data' } },
  });
  assert.equal((await runOne(h.ctx, snapshot, ref)).outcome, 'Advanced');
  assert.equal(h.kube.all('VolumeSnapshot').length, 1);
});

test('a snapshot not ready within operationTimeout fails the DataUpload with the controller error', async () => {
  const h = harness('snapshot');
  h.kube.seed(dataUpload({ operationTimeout: '30s' }, { phase: 'New' }), pvc('app', 'data'));
  h.kube.on('create', 'VolumeSnapshot', (vs, k) =>
    k.mutate({ kind: 'VolumeSnapshot', namespace: 'app', name: vs.metadata.name }, (o) => {
      o.status = { readyToUse: false, error: { message: 'driver refused' } };
    }),
  );
  const started = h.clock.ms;
  await runOne(h.ctx, snapshot, ref);
  assert.equal(du(h.kube).status?.phase, 'Failing');
  assert.match(du(h.kube).status!.message!, /was not ready within 30s: driver refused/);
  assert.ok(h.clock.ms - started >= 30_000 && h.clock.ms - started < 40_000);
});

test('a missing source PVC or a malformed timeout fails with a message naming it', async () => {
  const h = harness('snapshot');
  h.kube.seed(dataUpload({}, { phase: 'New' }));
  await runOne(h.ctx, snapshot, ref);
  assert.equal(du(h.kube).status?.message, 'The source PVC app/data does not exist.');
  const h2 = harness('snapshot');
  h2.kube.seed(dataUpload({ operationTimeout: 'soon' }, { phase: 'New' }), pvc('app', 'data'));
  await runOne(h2.ctx, snapshot, ref);
  assert.match(du(h2.kube).status!.message!, /spec.operationTimeout: "soon" is not a duration/);
});

test('Go durations parse as Velero writes them', () => {
  assert.equal(parseDuration('10m'), 600_000);
  assert.equal(parseDuration('1h30m'), 5_400_000);
  assert.equal(parseDuration('1.5s'), 1500);
  assert.equal(parseDuration('250ms'), 250);
  assert.equal(parseDuration(''), undefined);
  assert.throws(() => parseDuration('10'), /not a duration/);
  assert.throws(() => parseDuration('5 m'), /not a duration/);
});
