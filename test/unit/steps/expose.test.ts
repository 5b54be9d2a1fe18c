import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DataDownload, DataUpload } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import type { MemoryKube } from '../../../src/shared/kube/memory.ts';
import type { PersistentVolumeClaim, VolumeSnapshot, VolumeSnapshotContent } from '../../../src/shared/kube/objects.ts';
import { expose } from '../../../src/steps/data/expose.ts';
import { runOne } from '../../../src/steps/data/run.ts';
import { dataDownload, dataUpload, ferryNamespace, harness, pvc } from './harness.ts';

const uid = '0b7c7a2e-1111-4c3e-9f00-000000000001';
const name = `ferry-${uid}`;

function sourceSnapshot(kube: MemoryKube): void {
  kube.seed(
    {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name, namespace: 'app' },
      spec: { source: { persistentVolumeClaimName: 'data' } },
      status: { readyToUse: true, restoreSize: '2Gi', boundVolumeSnapshotContentName: 'snapcontent-1' },
    },
    {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotContent',
      metadata: { name: 'snapcontent-1' },
      spec: {
        deletionPolicy: 'Delete',
        driver: 'local.csi.ferry.dev',
        source: { volumeHandle: 'vol-1' },
        volumeSnapshotRef: { namespace: 'app', name },
        volumeSnapshotClassName: 'ferry-local',
        sourceVolumeMode: 'Filesystem',
      },
      status: { snapshotHandle: 'snap-123', readyToUse: true },
    },
  );
  // the snapshot controller binds a pre-provisioned content and its snapshot
  kube.on('create', 'VolumeSnapshot', (vs, k) =>
    k.mutate({ kind: 'VolumeSnapshot', namespace: vs.metadata.namespace, name: vs.metadata.name }, (o) => {
      o.status = { readyToUse: true, restoreSize: '2Gi' };
    }),
  );
}

test("backup: clones the snapshot content (same handle, Retain) into ferry's namespace and makes a PVC from it", async () => {
  const h = harness('expose');
  h.kube.seed(
    dataUpload({}, { phase: 'Accepted', volumeSnapshot: name, volumeMode: 'Filesystem' }),
    pvc('app', 'data', { resources: { requests: { storage: '1Gi' } } }),
  );
  sourceSnapshot(h.kube);
  assert.equal(
    (await runOne(h.ctx, expose, { kind: 'DataUpload', namespace: 'app', name: 'du-1' })).outcome,
    'Advanced',
  );
  const vsc = h.kube.peek<VolumeSnapshotContent>({ kind: 'VolumeSnapshotContent', name })!;
  assert.deepEqual(vsc.spec, {
    deletionPolicy: 'Retain',
    driver: 'local.csi.ferry.dev',
    source: { snapshotHandle: 'snap-123' },
    volumeSnapshotRef: {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      namespace: ferryNamespace,
      name,
    },
    volumeSnapshotClassName: 'ferry-local',
    sourceVolumeMode: 'Filesystem',
  });
  const vs = h.kube.peek<VolumeSnapshot>({ kind: 'VolumeSnapshot', namespace: ferryNamespace, name })!;
  assert.deepEqual(vs.spec.source, { volumeSnapshotContentName: name });
  const claim = h.kube.peek<PersistentVolumeClaim>({ kind: 'PersistentVolumeClaim', namespace: ferryNamespace, name })!;
  assert.deepEqual(claim.spec, {
    accessModes: ['ReadWriteOnce'],
    storageClassName: 'fast',
    volumeMode: 'Filesystem',
    resources: { requests: { storage: '2Gi' } },
    dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name },
  });
  for (const o of [vsc, vs, claim]) assert.equal(o.metadata.labels?.['ferry.dev/uid'], uid);
  const du = h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'du-1' })!;
  assert.equal(du.status?.phase, 'Prepared');
  assert.deepEqual(du.status?.exposure, {
    namespace: ferryNamespace,
    pvc: name,
    volumeSnapshot: name,
    volumeSnapshotContent: name,
  });
});

test('backup: ReadOnlyMany when the storage class says its driver allows it; running again changes nothing', async () => {
  const h = harness('expose');
  h.kube.seed(dataUpload({}, { phase: 'Accepted', volumeSnapshot: name, volumeMode: 'Block' }), pvc('app', 'data'), {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'fast', annotations: { 'ferry.dev/backup-access-mode': 'ReadOnlyMany' } },
    provisioner: 'x',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
  sourceSnapshot(h.kube);
  await runOne(h.ctx, expose, { kind: 'DataUpload', namespace: 'app', name: 'du-1' });
  const claim = h.kube.peek<PersistentVolumeClaim>({ kind: 'PersistentVolumeClaim', namespace: ferryNamespace, name })!;
  assert.deepEqual(claim.spec.accessModes, ['ReadOnlyMany']);
  assert.equal(claim.spec.volumeMode, 'Block');
  // a second copy of the Job, started before the first one's status write was visible
  h.kube.mutate({ kind: 'DataUpload', namespace: 'app', name: 'du-1' }, (o) => {
    (o.status as { phase: string }).phase = 'Accepted';
  });
  assert.equal(
    (await runOne(h.ctx, expose, { kind: 'DataUpload', namespace: 'app', name: 'du-1' })).outcome,
    'Advanced',
  );
  assert.equal(h.kube.all('PersistentVolumeClaim').filter((p) => p.metadata.namespace === ferryNamespace).length, 1);
});

test('backup: with an immediate-binding class the step waits until the PVC is bound, and fails if it never is', async () => {
  for (const binds of [true, false]) {
    const h = harness('expose');
    h.kube.seed(
      dataUpload({ operationTimeout: '1m' }, { phase: 'Accepted', volumeSnapshot: name }),
      pvc('app', 'data'),
      {
        apiVersion: 'storage.k8s.io/v1',
        kind: 'StorageClass',
        metadata: { name: 'fast' },
        provisioner: 'x',
        volumeBindingMode: 'Immediate',
      },
    );
    sourceSnapshot(h.kube);
    let looks = 0;
    h.kube.on('get', 'PersistentVolumeClaim', (o, k) => {
      if (o.metadata.namespace === ferryNamespace && ++looks === 3 && binds)
        k.mutate({ kind: 'PersistentVolumeClaim', namespace: ferryNamespace, name }, (c) => {
          c.status = { phase: 'Bound' };
        });
    });
    await runOne(h.ctx, expose, { kind: 'DataUpload', namespace: 'app', name: 'du-1' });
    const du = h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'du-1' })!;
    assert.equal(du.status?.phase, binds ? 'Prepared' : 'Failing');
    if (binds) assert.ok(looks >= 3, 'it looked until the PVC was bound');
    else {
      assert.match(du.status!.message!, /was not bound within 1m: StorageClass \S+ \(provisioner \S+\) made no volume/);
      assert.doesNotMatch(du.status!.message!, /see its events/, 'the PVC is gone by the time anyone looks');
    }
  }
});

test('backup: a snapshot that lost its content fails the DataUpload', async () => {
  const h = harness('expose');
  h.kube.seed(dataUpload({}, { phase: 'Accepted', volumeSnapshot: name }), {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name, namespace: 'app' },
    spec: { source: {} },
    status: { readyToUse: true },
  });
  await runOne(h.ctx, expose, { kind: 'DataUpload', namespace: 'app', name: 'du-1' });
  const du = h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'du-1' })!;
  assert.equal(du.status?.phase, 'Failing');
  assert.match(du.status!.message!, /bound to no content/);
});

const ddRef = { kind: 'DataDownload' as const, namespace: 'restore', name: 'dd-1' };
const ddName = 'ferry-5a5a5a5a-2222-4c3e-9f00-000000000002';

test("restore: an empty PVC of the requested size and class in ferry's namespace; the snapshot id is recorded", async () => {
  const h = harness('expose');
  h.kube.seed(
    dataDownload({
      targetPVC: { name: 'data-copy', size: '3Gi', storageClassName: 'slow' },
      source: { snapshotID: 'abcdef12' },
    }),
  );
  await runOne(h.ctx, expose, ddRef);
  const claim = h.kube.peek<PersistentVolumeClaim>({
    kind: 'PersistentVolumeClaim',
    namespace: ferryNamespace,
    name: ddName,
  })!;
  assert.deepEqual(claim.spec, {
    accessModes: ['ReadWriteOnce'],
    storageClassName: 'slow',
    volumeMode: 'Filesystem',
    resources: { requests: { storage: '3Gi' } },
  });
  const dd = h.kube.peek<DataDownload & KubeObject>(ddRef)!;
  assert.equal(dd.status?.phase, 'Prepared');
  assert.equal(dd.status?.snapshotID, undefined, 'an id prefix is resolved by transfer, which reads the repository');
  assert.deepEqual(dd.status?.exposure, { namespace: ferryNamespace, pvc: ddName });
});

test("restore from a DataUpload: its snapshot, volume mode and the source PVC's size", async () => {
  const h = harness('expose');
  const du = dataUpload({}, { phase: 'Completed', snapshotID: 'f'.repeat(64), volumeMode: 'Block' });
  h.kube.seed(
    du,
    pvc('app', 'data', { resources: { requests: { storage: '5Gi' } } }),
    dataDownload({ source: { dataUpload: { name: 'du-1', namespace: 'app' } } }),
  );
  await runOne(h.ctx, expose, ddRef);
  const claim = h.kube.peek<PersistentVolumeClaim>({
    kind: 'PersistentVolumeClaim',
    namespace: ferryNamespace,
    name: ddName,
  })!;
  assert.equal(claim.spec.volumeMode, 'Block');
  assert.equal(claim.spec.resources?.requests?.storage, '5Gi');
  assert.equal(h.kube.peek<DataDownload & KubeObject>(ddRef)!.status?.snapshotID, 'f'.repeat(64));
});

test('restore from a DataUpload whose PVC is gone sizes the volume from the backed-up bytes', async () => {
  const h = harness('expose');
  h.kube.seed(
    dataUpload(
      {},
      {
        phase: 'Completed',
        snapshotID: 'f'.repeat(64),
        volumeMode: 'Block',
        stats: { files: 1, bytes: 3 * 2 ** 20 + 1, bytesAdded: 0, bytesStored: 0, durationSeconds: 1 },
      },
    ),
    dataDownload({ source: { dataUpload: { name: 'du-1', namespace: 'app' } } }),
  );
  await runOne(h.ctx, expose, ddRef);
  assert.equal(
    h.kube.peek<PersistentVolumeClaim>({ kind: 'PersistentVolumeClaim', namespace: ferryNamespace, name: ddName })!.spec
      .resources?.requests?.storage,
    '4Mi',
  );
});

test('restore refuses a target PVC that is already bound, an unfinished DataUpload, and an unknown size', async () => {
  const cases: [KubeObject[], RegExp][] = [
    [
      [
        dataDownload({ targetPVC: { name: 'data-copy', size: '1Gi' } }),
        pvc('restore', 'data-copy', { volumeName: 'pv-9' }, { phase: 'Bound' }),
      ],
      /already bound/,
    ],
    [
      [
        dataDownload({ source: { dataUpload: { name: 'du-1', namespace: 'app' } } }),
        dataUpload({}, { phase: 'InProgress' }),
      ],
      /has no completed backup to restore \(phase InProgress\)/,
    ],
    [[dataDownload()], /spec.targetPVC.size is required/],
    [
      [dataDownload({ targetPVC: { name: 'x', size: 'big' } })],
      /spec.targetPVC.size: "big" is not a Kubernetes quantity/,
    ],
  ];
  for (const [objs, message] of cases) {
    const h = harness('expose');
    h.kube.seed(...objs);
    await runOne(h.ctx, expose, ddRef);
    const dd = h.kube.peek<DataDownload & KubeObject>(ddRef)!;
    assert.equal(dd.status?.phase, 'Failing');
    assert.match(dd.status!.message!, message);
  }
});
