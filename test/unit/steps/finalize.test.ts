import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DataDownload, DataUpload } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import type { MemoryKube } from '../../../src/shared/kube/memory.ts';
import type { PersistentVolume, PersistentVolumeClaim } from '../../../src/shared/kube/objects.ts';
import { finalize } from '../../../src/steps/data/finalize.ts';
import { runOne } from '../../../src/steps/data/run.ts';
import { dataDownload, dataUpload, eventsOf, ferryNamespace, harness, pvc } from './harness.ts';

const duUID = '0b7c7a2e-1111-4c3e-9f00-000000000001';
const exposed = `ferry-${duUID}`;
const duRef = { kind: 'DataUpload' as const, namespace: 'app', name: 'du-1' };
const labels = { 'ferry.dev/uid': duUID };

function exposureOf(kube: MemoryKube, nativeLabels: Record<string, string> | undefined = labels): void {
  kube.seed(
    {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name: exposed, namespace: 'app', labels: nativeLabels },
      spec: { source: { persistentVolumeClaimName: 'data' } },
    },
    {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name: exposed, namespace: ferryNamespace, labels },
      spec: { source: { volumeSnapshotContentName: exposed } },
    },
    {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotContent',
      metadata: { name: exposed, labels },
      spec: { deletionPolicy: 'Retain' },
    },
    { ...pvc(ferryNamespace, exposed), metadata: { name: exposed, namespace: ferryNamespace, labels } },
    // a finished transfer pod still holds the exposed PVC: its Job goes; the other steps' Jobs stay
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'ferry-up-transfer-1',
        namespace: ferryNamespace,
        labels: { ...labels, 'ferry.dev/step': 'transfer' },
      },
      spec: {},
    },
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'ferry-up-snapshot-1',
        namespace: ferryNamespace,
        labels: { ...labels, 'ferry.dev/step': 'snapshot' },
      },
      spec: {},
    },
    // someone else's objects in ferry's namespace stay
    {
      ...pvc(ferryNamespace, 'other'),
      metadata: { name: 'other', namespace: ferryNamespace, labels: { 'ferry.dev/uid': 'someone-else' } },
    },
  );
}

function names(
  kube: MemoryKube,
  kind: 'VolumeSnapshot' | 'VolumeSnapshotContent' | 'PersistentVolumeClaim' | 'PersistentVolume' | 'Job',
): string[] {
  return kube
    .all(kind)
    .map((o) => `${o.metadata.namespace ?? ''}/${o.metadata.name}`)
    .sort();
}

const table: { phase: 'Finalizing' | 'Failing' | 'Canceling'; moveData: boolean; to: string; nativeKept: boolean }[] = [
  { phase: 'Finalizing', moveData: true, to: 'Completed', nativeKept: false },
  { phase: 'Finalizing', moveData: false, to: 'Completed', nativeKept: true },
  { phase: 'Failing', moveData: true, to: 'Failed', nativeKept: false },
  { phase: 'Failing', moveData: false, to: 'Failed', nativeKept: false },
  { phase: 'Canceling', moveData: true, to: 'Canceled', nativeKept: false },
];

for (const row of table) {
  test(`DataUpload ${row.phase} (snapshotMoveData ${row.moveData}): exposure removed, native snapshot ${row.nativeKept ? 'kept' : 'deleted'}, phase ${row.to}`, async () => {
    const h = harness('finalize');
    h.kube.seed(
      dataUpload(
        { snapshotMoveData: row.moveData },
        { phase: row.phase, volumeSnapshot: exposed, message: 'The source PVC app/data does not exist.' },
      ),
    );
    exposureOf(h.kube);
    assert.equal((await runOne(h.ctx, finalize, duRef)).outcome, 'Advanced');
    assert.deepEqual(names(h.kube, 'VolumeSnapshot'), row.nativeKept ? [`app/${exposed}`] : []);
    assert.deepEqual(names(h.kube, 'VolumeSnapshotContent'), []);
    assert.deepEqual(names(h.kube, 'PersistentVolumeClaim'), [`${ferryNamespace}/other`]);
    assert.deepEqual(
      h.kube.all('Job').map((j) => j.metadata.name),
      ['ferry-up-snapshot-1'],
    );
    const du = h.kube.peek<DataUpload & KubeObject>(duRef)!;
    assert.equal(du.status?.phase, row.to);
    assert.equal(du.status?.completionTimestamp, '2026-03-01T12:00:00.000Z');
    assert.equal(
      du.status?.conditions?.find((c) => c.type === 'Succeeded')?.status,
      row.to === 'Completed' ? 'True' : 'False',
    );
    if (row.phase === 'Failing')
      assert.match(du.status!.message!, /^Backup failed\. The source PVC app\/data does not exist\./);
    assert.deepEqual(
      eventsOf(h.kube).map((e) => [e.reason, e.type]),
      [[row.to, row.to === 'Completed' ? 'Normal' : 'Warning']],
    );
  });
}

test('a VolumeSnapshot the user named in spec.csiSnapshot is never deleted', async () => {
  const h = harness('finalize');
  h.kube.seed(
    dataUpload({ csiSnapshot: { volumeSnapshot: exposed } }, { phase: 'Finalizing', volumeSnapshot: exposed }),
  );
  exposureOf(h.kube, {});
  await runOne(h.ctx, finalize, duRef);
  assert.deepEqual(names(h.kube, 'VolumeSnapshot'), [`app/${exposed}`]);
});

test('objects that will not go away make the step fail for a retry, leaving the phase', async () => {
  const h = harness('finalize');
  h.kube.seed(dataUpload({}, { phase: 'Finalizing' }));
  exposureOf(h.kube);
  h.kube.mutate({ kind: 'PersistentVolumeClaim', namespace: ferryNamespace, name: exposed }, (o) => {
    o.metadata.finalizers = ['kubernetes.io/pvc-protection'];
  });
  await assert.rejects(runOne(h.ctx, finalize, duRef), /were not deleted within two minutes/);
  assert.equal(h.kube.peek<DataUpload & KubeObject>(duRef)!.status?.phase, 'Finalizing');
});

const ddUID = '5a5a5a5a-2222-4c3e-9f00-000000000002';
const restorePVC = `ferry-${ddUID}`;
const ddRef = { kind: 'DataDownload' as const, namespace: 'restore', name: 'dd-1' };

/** The restore PVC, bound to its dynamically provisioned PV, as the transfer left it. */
function restoredVolume(kube: MemoryKube): void {
  kube.seed(
    {
      ...pvc(ferryNamespace, restorePVC, { volumeName: 'pv-1', storageClassName: 'fast' }, { phase: 'Bound' }),
      metadata: { name: restorePVC, namespace: ferryNamespace, labels: { 'ferry.dev/uid': ddUID } },
    },
    {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-1' },
      spec: {
        capacity: { storage: '3Gi' },
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'fast',
        volumeMode: 'Filesystem',
        persistentVolumeReclaimPolicy: 'Delete',
        claimRef: {
          kind: 'PersistentVolumeClaim',
          namespace: ferryNamespace,
          name: restorePVC,
          uid: 'restore-pvc-uid',
        },
      },
      status: { phase: 'Bound' },
    },
  );
}

/** Stands in for the volume controller: a claim pre-bound to a PV, or a PV whose claimRef names a claim, bind. */
function volumeBinder(kube: MemoryKube): void {
  const bind = (claim: { namespace: string; name: string }, pvName: string) =>
    kube.mutate({ kind: 'PersistentVolumeClaim', ...claim }, (o) => {
      (o.spec as { volumeName?: string }).volumeName = pvName;
      o.status = { phase: 'Bound' };
    });
  kube.on('create', 'PersistentVolumeClaim', (o) => {
    const volumeName = (o.spec as { volumeName?: string }).volumeName;
    if (volumeName) bind({ namespace: o.metadata.namespace!, name: o.metadata.name }, volumeName);
  });
  kube.on('patch', 'PersistentVolume', (o) => {
    const ref = (o as PersistentVolume).spec.claimRef;
    if (ref?.uid && kube.peek({ kind: 'PersistentVolumeClaim', namespace: ref.namespace, name: ref.name! }))
      bind({ namespace: ref.namespace!, name: ref.name! }, o.metadata.name);
  });
}

test('restore: the restored volume is handed to a new target PVC only now, keeping its reclaim policy', async () => {
  const h = harness('finalize');
  h.kube.seed(dataDownload({}, { phase: 'Finalizing', exposure: { namespace: ferryNamespace, pvc: restorePVC } }), {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'ferry-down-transfer-1',
      namespace: ferryNamespace,
      labels: { 'ferry.dev/uid': ddUID, 'ferry.dev/step': 'transfer' },
    },
    spec: {},
  });
  restoredVolume(h.kube);
  volumeBinder(h.kube);
  // like pvc-protection: the restore PVC cannot go while the transfer Job (and its pod) exists
  h.kube.on('delete', 'PersistentVolumeClaim', (o) =>
    assert.equal(h.kube.all('Job').length, 0, `${o.metadata.name} deleted while the transfer Job exists`),
  );
  assert.equal((await runOne(h.ctx, finalize, ddRef)).outcome, 'Advanced');
  const target = h.kube.peek<PersistentVolumeClaim>({
    kind: 'PersistentVolumeClaim',
    namespace: 'restore',
    name: 'data-copy',
  })!;
  assert.deepEqual(target.spec, {
    accessModes: ['ReadWriteOnce'],
    storageClassName: 'fast',
    volumeMode: 'Filesystem',
    resources: { requests: { storage: '3Gi' } },
    volumeName: 'pv-1',
  });
  assert.equal(target.metadata.labels?.['ferry.dev/dynamic-pv-restore'], 'restore.data-copy');
  const pv = h.kube.peek<PersistentVolume>({ kind: 'PersistentVolume', name: 'pv-1' })!;
  assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Delete');
  assert.deepEqual(pv.spec.claimRef, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    namespace: 'restore',
    name: 'data-copy',
  });
  assert.equal(pv.metadata.labels?.['ferry.dev/dynamic-pv-restore'], 'restore.data-copy');
  assert.equal(pv.metadata.annotations?.['ferry.dev/reclaim-policy'], undefined);
  assert.deepEqual(names(h.kube, 'PersistentVolumeClaim'), ['restore/data-copy']);
  const dd = h.kube.peek<DataDownload & KubeObject>(ddRef)!;
  assert.equal(dd.status?.phase, 'Completed');
  assert.match(dd.status!.message!, /PVC restore\/data-copy is bound to the restored volume pv-1/);
  assert.deepEqual(
    h.kube.all('Job').map((j) => j.metadata.name),
    [],
    'the transfer Job went before its PVC',
  );
  // the PV was Retain while its restore PVC was deleted, so the data never risked deletion
  const order = h.kube.actions
    .filter(
      (a) =>
        (a.verb === 'patch' && a.kind === 'PersistentVolume') ||
        (a.verb === 'delete' && a.kind === 'PersistentVolumeClaim'),
    )
    .map((a) => `${a.verb} ${a.kind}`);
  assert.deepEqual(order.slice(0, 2), ['patch PersistentVolume', 'delete PersistentVolumeClaim']);
});

test('restore: a target PVC the user made beforehand is bound through the claimRef with its uid', async () => {
  const h = harness('finalize');
  h.kube.seed(
    dataDownload({}, { phase: 'Finalizing' }),
    pvc(
      'restore',
      'data-copy',
      { selector: { matchLabels: { 'ferry.dev/dynamic-pv-restore': 'restore.data-copy' } } },
      { phase: 'Pending' },
    ),
  );
  restoredVolume(h.kube);
  volumeBinder(h.kube);
  await runOne(h.ctx, finalize, ddRef);
  const target = h.kube.peek<PersistentVolumeClaim>({
    kind: 'PersistentVolumeClaim',
    namespace: 'restore',
    name: 'data-copy',
  })!;
  assert.equal(target.spec.volumeName, 'pv-1');
  assert.equal(
    h.kube.peek<PersistentVolume>({ kind: 'PersistentVolume', name: 'pv-1' })!.spec.claimRef?.uid,
    target.metadata.uid,
  );
  assert.equal(h.kube.peek<DataDownload & KubeObject>(ddRef)!.status?.phase, 'Completed');
});

test('restore: a finalize run again after a crash midway finishes the hand-over', async () => {
  const h = harness('finalize');
  h.kube.seed(dataDownload({}, { phase: 'Finalizing' }));
  restoredVolume(h.kube);
  // the crashed run had kept the volume and deleted the restore PVC
  h.kube.mutate({ kind: 'PersistentVolume', name: 'pv-1' }, (o) => {
    o.metadata.labels = { 'ferry.dev/uid': ddUID };
    o.metadata.annotations = { 'ferry.dev/reclaim-policy': 'Delete' };
    (o as PersistentVolume).spec.persistentVolumeReclaimPolicy = 'Retain';
    o.status = { phase: 'Released' };
  });
  await h.kube.delete({ kind: 'PersistentVolumeClaim', namespace: ferryNamespace, name: restorePVC });
  volumeBinder(h.kube);
  await runOne(h.ctx, finalize, ddRef);
  assert.equal(
    h.kube.peek<PersistentVolumeClaim>({ kind: 'PersistentVolumeClaim', namespace: 'restore', name: 'data-copy' })!.spec
      .volumeName,
    'pv-1',
  );
  assert.equal(
    h.kube.peek<PersistentVolume>({ kind: 'PersistentVolume', name: 'pv-1' })!.spec.persistentVolumeReclaimPolicy,
    'Delete',
  );
  assert.equal(h.kube.peek<DataDownload & KubeObject>(ddRef)!.status?.phase, 'Completed');
});

test('restore canceled: the restore PVC and a volume kept for it are deleted; no target PVC appears', async () => {
  const h = harness('finalize');
  h.kube.seed(dataDownload({}, { phase: 'Canceling' }));
  restoredVolume(h.kube);
  h.kube.mutate({ kind: 'PersistentVolume', name: 'pv-1' }, (o) => {
    o.metadata.labels = { 'ferry.dev/uid': ddUID };
  });
  await runOne(h.ctx, finalize, ddRef);
  assert.deepEqual(names(h.kube, 'PersistentVolumeClaim'), []);
  assert.deepEqual(names(h.kube, 'PersistentVolume'), []);
  assert.equal(h.kube.peek<DataDownload & KubeObject>(ddRef)!.status?.phase, 'Canceled');
});

for (const phase of ['Finalizing', 'Failing'] as const) {
  test(`block DataUpload ${phase}: ${phase === 'Finalizing' ? 'its CSI snapshot is kept for the next backup and the one kept before is deleted' : 'nothing is kept and the earlier kept snapshot stays'}`, async () => {
    const h = harness('finalize');
    const tracking = { driver: 'local.csi.ferry.dev', snapshotHandle: 'snap-now' };
    h.kube.seed(dataUpload({}, { phase, volumeSnapshot: exposed, volumeMode: 'Block', changeTracking: tracking }));
    const earlier = dataUpload(
      {},
      {
        phase: 'Completed',
        snapshotID: 'a'.repeat(64),
        changeTracking: { ...tracking, snapshotHandle: 'snap-old', retainedContent: 'snapcontent-old' },
      },
    );
    earlier.metadata = { ...earlier.metadata, name: 'du-0', uid: '0b7c7a2e-1111-4c3e-9f00-000000000000' };
    const content = (name: string, deletionPolicy: string): KubeObject => ({
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotContent',
      metadata: { name },
      spec: { deletionPolicy, driver: 'local.csi.ferry.dev' },
    });
    h.kube.seed(earlier, content('snapcontent-native', 'Delete'), content('snapcontent-old', 'Retain'));
    exposureOf(h.kube);
    h.kube.mutate({ kind: 'VolumeSnapshot', namespace: 'app', name: exposed }, (vs) => {
      vs.status = { boundVolumeSnapshotContentName: 'snapcontent-native', readyToUse: true };
    });
    assert.equal((await runOne(h.ctx, finalize, duRef)).outcome, 'Advanced');
    const kept = phase === 'Finalizing';
    assert.deepEqual(names(h.kube, 'VolumeSnapshot'), []);
    assert.deepEqual(
      names(h.kube, 'VolumeSnapshotContent'),
      kept ? ['/snapcontent-native'] : ['/snapcontent-native', '/snapcontent-old'],
    );
    const native = h.kube.peek<KubeObject>({ kind: 'VolumeSnapshotContent', name: 'snapcontent-native' })!;
    assert.equal((native.spec as { deletionPolicy: string }).deletionPolicy, kept ? 'Retain' : 'Delete');
    const du = h.kube.peek<DataUpload & KubeObject>(duRef)!;
    assert.equal(du.status?.changeTracking?.retainedContent, kept ? 'snapcontent-native' : undefined);
    const before = h.kube.peek<DataUpload & KubeObject>({ ...duRef, name: 'du-0' })!;
    assert.equal(before.status?.changeTracking?.retainedContent, kept ? undefined : 'snapcontent-old');
  });
}
