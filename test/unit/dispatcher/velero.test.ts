// The Velero bridge on an in-memory cluster: which Velero objects ferry takes (only its own data mover's, only in
// Velero's namespace), what the mirror and Velero's status say, and what happens when either side is attacked or
// goes away: a tenant forging a mirror, a mirror losing its annotations, a backup deleted or still there.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Dispatcher } from '../../../src/dispatcher/dispatcher.ts';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import type { DataDownload, DataUpload } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { createLogger } from '../../../src/shared/kube/logger.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { mirrorAnnotations } from '../../../src/shared/velero/mirror.ts';
import type { Resource } from '../../../src/shared/dispatch/status.ts';
import { claim, ferryNamespace, location, review, templates, world } from './world.ts';

const veleroNs = 'velero';

function veleroUpload(name: string, spec: Record<string, unknown> = {}, namespace = veleroNs): KubeObject {
  return {
    apiVersion: 'velero.io/v2alpha1',
    kind: 'VeleroDataUpload',
    metadata: {
      name,
      namespace,
      uid: `uid-${name}`,
      resourceVersion: '1',
      labels: { 'velero.io/backup-name': 'nightly', 'velero.io/backup-uid': 'backup-uid' },
    },
    spec: {
      snapshotType: 'CSI',
      csiSnapshot: { volumeSnapshot: 'velero-data-abcde', storageClass: 'local', snapshotClass: 'ferry-local' },
      sourcePVC: 'data',
      sourceNamespace: 'app',
      backupStorageLocation: 'default',
      datamover: 'ferry',
      operationTimeout: '10m0s',
      ...spec,
    },
  };
}

function veleroDownload(name: string): KubeObject {
  return {
    apiVersion: 'velero.io/v2alpha1',
    kind: 'VeleroDataDownload',
    metadata: { name, namespace: veleroNs, uid: `uid-${name}`, resourceVersion: '1' },
    spec: {
      targetVolume: { pvc: 'data', pv: '', namespace: 'other' },
      backupStorageLocation: 'default',
      datamover: 'ferry',
      snapshotID: 'ab'.repeat(32),
      sourceNamespace: 'app',
      operationTimeout: '10m0s',
    },
  };
}

function completedBackup(name: string, uid: string): KubeObject {
  return {
    apiVersion: 'velero.io/v1',
    kind: 'VeleroBackup',
    metadata: { name, namespace: veleroNs, uid },
    status: { phase: 'Completed' },
  };
}

function veleroWorld(): { kube: MemoryKube; dispatcher: Dispatcher } {
  const kube = new MemoryKube();
  const loc = location();
  (loc.spec as Record<string, unknown>).velero = { backupStorageLocation: 'default' };
  kube.seed(loc, claim('app', 'data'), ...templates());
  const dispatcher = new Dispatcher({
    kube,
    namespace: ferryNamespace,
    limits: { cluster: 0, perNode: 0 },
    maxAttempts: 3,
    nodes: async () => [],
    log: createLogger({}, { write: () => {} }),
    veleroNamespace: veleroNs,
  });
  return { kube, dispatcher };
}

const velero = (kube: MemoryKube, name: string, kind: 'VeleroDataUpload' | 'VeleroDataDownload' = 'VeleroDataUpload') =>
  kube.peek<KubeObject & { status?: Record<string, unknown> }>({ kind, namespace: veleroNs, name });

describe('ferry as Velero data mover: the bridge', () => {
  it('mirrors a Velero DataUpload naming ferry into the PVC namespace, and Velero shows it Accepted', async () => {
    const { kube, dispatcher } = veleroWorld();
    kube.seed(veleroUpload('nightly-x1'));
    await dispatcher.velero!.sweep([]);
    const mirror = kube.peek<DataUpload & KubeObject>({
      kind: 'DataUpload',
      namespace: 'app',
      name: 'velero-nightly-x1',
    });
    assert.ok(mirror, 'a mirror DataUpload in namespace app');
    assert.deepEqual(mirror.spec.csiSnapshot, {
      volumeSnapshot: 'velero-data-abcde',
      snapshotClass: 'ferry-local',
      deleteWhenDone: true,
    });
    assert.equal(mirror.spec.sourcePVC, 'data');
    assert.equal(mirror.spec.backupStorageLocation, 'default');
    assert.equal(mirror.metadata.annotations?.[mirrorAnnotations.uid], 'uid-nightly-x1');
    assert.equal(mirror.metadata.annotations?.[mirrorAnnotations.backup], 'nightly');
    const v = velero(kube, 'nightly-x1')!;
    assert.equal(v.status?.phase, 'Accepted');
    assert.equal(v.status?.node, undefined, 'status.node stays empty, or a restarting node-agent would take it over');
  });

  it("never touches DataUploads of Velero's own mover, nor ferry's in another namespace", async () => {
    const { kube, dispatcher } = veleroWorld();
    kube.seed(
      veleroUpload('builtin', { datamover: '' }),
      veleroUpload('velero-mover', { datamover: 'velero' }),
      veleroUpload('elsewhere', {}, 'app'),
    );
    await dispatcher.velero!.sweep([]);
    assert.equal(kube.all('DataUpload').length, 0, 'no mirror made');
    for (const [name, ns] of [
      ['builtin', veleroNs],
      ['velero-mover', veleroNs],
      ['elsewhere', 'app'],
    ]) {
      const v = kube.peek<KubeObject & { status?: unknown }>({ kind: 'VeleroDataUpload', namespace: ns, name });
      assert.equal(v?.status, undefined, `${ns}/${name} untouched`);
    }
  });

  it('fails the Velero object, naming the setting, when no ferry location serves its Velero location', async () => {
    const { kube, dispatcher } = veleroWorld();
    kube.seed(veleroUpload('lost', { backupStorageLocation: 'offsite' }));
    await dispatcher.velero!.sweep([]);
    const v = velero(kube, 'lost')!;
    assert.equal(v.status?.phase, 'Failed');
    assert.match(String(v.status?.message), /spec\.velero\.backupStorageLocation: offsite/);
    assert.equal(kube.all('DataUpload').length, 0);
  });

  it('shows progress, then Completed together with the snapshot id, and hands a cancel on', async () => {
    const { kube, dispatcher } = veleroWorld();
    kube.seed(veleroUpload('run'));
    const bridge = dispatcher.velero!;
    await bridge.sweep([]);
    const key = { kind: 'DataUpload' as const, namespace: 'app', name: 'velero-run' };
    kube.mutate(key, (m) => {
      m.status = { phase: 'InProgress', progress: { bytesDone: 10, totalBytes: 100 }, node: 'node-1' };
    });
    await bridge.mirrorChanged(kube.peek<Resource>(key)!);
    assert.equal(velero(kube, 'run')!.status?.phase, 'InProgress');
    assert.deepEqual(velero(kube, 'run')!.status?.progress, { totalBytes: 100, bytesDone: 10 });
    assert.equal(velero(kube, 'run')!.status?.node, undefined);

    kube.mutate({ kind: 'VeleroDataUpload', namespace: veleroNs, name: 'run' }, (v) => {
      (v.spec as Record<string, unknown>).cancel = true;
    });
    await bridge.veleroChanged('DataUpload', velero(kube, 'run') as never);
    assert.equal((kube.peek<DataUpload & KubeObject>(key)!.spec as DataUpload['spec']).cancel, true);

    kube.mutate(key, (m) => {
      m.status = {
        phase: 'Completed',
        snapshotID: 'cd'.repeat(32),
        completionTimestamp: '2026-01-01T00:00:00Z',
        stats: { files: 1, bytes: 100, bytesAdded: 40, bytesStored: 30, durationSeconds: 1 },
      };
    });
    let writes = 0;
    kube.on('patch', 'VeleroDataUpload', () => writes++);
    await bridge.mirrorChanged(kube.peek<Resource>(key)!);
    const done = velero(kube, 'run')!.status!;
    assert.equal(writes, 1, 'one write');
    assert.equal(done.phase, 'Completed');
    assert.equal(done.snapshotID, 'cd'.repeat(32));
    assert.equal(done.incrementalBytes, 40);
    // an ended Velero object is never written again
    kube.mutate(key, (m) => {
      (m.status as Record<string, unknown>).message = 'later';
    });
    await bridge.mirrorChanged(kube.peek<Resource>(key)!);
    assert.equal(writes, 1);
  });

  it('mirrors a DataDownload into the target namespace; it waits for the PVC Velero makes', async () => {
    const { kube, dispatcher } = veleroWorld();
    kube.seed(veleroDownload('restore-1'));
    await dispatcher.velero!.sweep([]);
    const m = kube.peek<DataDownload & KubeObject>({
      kind: 'DataDownload',
      namespace: 'other',
      name: 'velero-restore-1',
    });
    assert.ok(m);
    assert.deepEqual(m.spec.targetPVC, { name: 'data', awaitClaim: true });
    assert.equal(m.spec.sourceNamespace, 'app');
    assert.equal(m.spec.source.snapshotID, 'ab'.repeat(32));
  });

  it("keeps a completed mirror while Velero's backup exists, deletes it once the backup is gone", async () => {
    const { kube, dispatcher } = veleroWorld();
    kube.seed(veleroUpload('kept'), completedBackup('nightly', 'backup-uid'));
    const bridge = dispatcher.velero!;
    await bridge.sweep([]);
    const key = { kind: 'DataUpload' as const, namespace: 'app', name: 'velero-kept' };
    kube.mutate(key, (m) => {
      m.status = { phase: 'Completed', snapshotID: 'ef'.repeat(32) };
    });
    await kube.delete({ kind: 'VeleroDataUpload', namespace: veleroNs, name: 'kept' });
    await bridge.sweep([kube.peek<Resource>(key)!]);
    assert.ok(kube.peek(key), 'the backup still exists: its data stays');
    await kube.delete({ kind: 'VeleroBackup', namespace: veleroNs, name: 'nightly' });
    await bridge.sweep([kube.peek<Resource>(key)!]);
    assert.equal(kube.peek(key), undefined, 'the mirror went, and its finalizer frees the data');
  });

  it('ties a mirror to its Backup by owner, not by the label Velero shortens past 63 characters', async () => {
    const { kube, dispatcher } = veleroWorld();
    const long = `nightly-${'x'.repeat(92)}`;
    const du = veleroUpload('long-1');
    du.metadata.labels = {
      'velero.io/backup-name': 'nightly-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-3a5f2c1d0e9b',
      'velero.io/backup-uid': 'long-uid',
    };
    du.metadata.ownerReferences = [
      { apiVersion: 'velero.io/v1', kind: 'Backup', name: long, uid: 'long-uid', controller: true },
    ];
    kube.seed(du, completedBackup(long, 'long-uid'));
    const bridge = dispatcher.velero!;
    await bridge.sweep([]);
    const key = { kind: 'DataUpload' as const, namespace: 'app', name: 'velero-long-1' };
    assert.equal(kube.peek<Resource>(key)!.metadata.annotations?.[mirrorAnnotations.backup], long);
    kube.mutate(key, (m) => {
      m.status = { phase: 'Completed', snapshotID: '12'.repeat(32) };
    });
    await kube.delete({ kind: 'VeleroDataUpload', namespace: veleroNs, name: 'long-1' });
    await bridge.sweep([kube.peek<Resource>(key)!]);
    assert.ok(kube.peek(key), 'the Backup is found by its full name, so its data stays');
  });

  it('cancels a running mirror whose Velero object was deleted', async () => {
    const { kube, dispatcher } = veleroWorld();
    kube.seed(veleroUpload('gone'));
    await dispatcher.velero!.sweep([]);
    const key = { kind: 'DataUpload' as const, namespace: 'app', name: 'velero-gone' };
    kube.mutate(key, (m) => {
      m.status = { phase: 'InProgress' };
    });
    const before = velero(kube, 'gone');
    await kube.delete({ kind: 'VeleroDataUpload', namespace: veleroNs, name: 'gone' });
    await dispatcher.velero!.veleroChanged('DataUpload', undefined, before as never);
    assert.equal((kube.peek<DataUpload & KubeObject>(key)!.spec as DataUpload['spec']).cancel, true);
  });
});

describe('ferry as Velero data mover: forged mirrors', () => {
  const forged = (): KubeObject => ({
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: {
      name: 'velero-nightly-x1',
      namespace: 'app',
      annotations: {
        [mirrorAnnotations.object]: 'velero/nightly-x1',
        [mirrorAnnotations.uid]: 'uid-nightly-x1',
        [mirrorAnnotations.backup]: 'nightly',
      },
    },
    spec: { sourcePVC: 'data', backupStorageLocation: 'default' },
  });
  const withUser = (body: ReturnType<typeof review>, username: string) => {
    body.request!.userInfo = { username };
    return body;
  };

  it("refuses a tenant's DataUpload carrying a mirror's annotations, and takes ferry's own", async () => {
    const w = world();
    const tenant = await handleReview(
      withUser(review('CREATE', forged()), 'system:serviceaccount:app:default'),
      w.handler,
    );
    assert.equal(tenant.status, 200);
    const answer = (tenant as { review: { response: { allowed: boolean; status?: { message: string } } } }).review
      .response;
    assert.equal(answer.allowed, false);
    assert.match(answer.status!.message, /only ferry's dispatcher creates/);
    const ours = await handleReview(
      withUser(review('CREATE', forged()), `system:serviceaccount:${ferryNamespace}:ferry-dispatcher`),
      w.handler,
    );
    assert.equal((ours as { review: { response: { allowed: boolean } } }).review.response.allowed, true);
    await w.settle();
  });

  it("refuses removing or changing a mirror's annotations", async () => {
    const w = world();
    const old = { ...forged(), metadata: { ...forged().metadata, uid: 'u1', resourceVersion: '1' } };
    const stripped = { ...old, metadata: { ...old.metadata, annotations: {} } };
    const res = await handleReview(review('UPDATE', stripped, { old }), w.handler);
    const answer = (res as { review: { response: { allowed: boolean; status?: { message: string } } } }).review
      .response;
    assert.equal(answer.allowed, false);
    assert.match(answer.status!.message, /cannot be added, changed or removed/);
    await w.settle();
  });
});
