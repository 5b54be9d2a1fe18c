// A rerun creates nothing twice and adopts only its own objects; the inputs a user controls are checked before
// anything is made: PVCs of other namespaces are never selected, a missing or unbound claim or a closed location is
// a FailedValidation naming it, and objects of the names ferry uses but owned by someone else are refused.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { volumeSnapshotName } from '../../../src/shared/app/names.ts';
import { KubeError } from '../../../src/shared/kube/errors.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { runAppBackup } from '../../../src/steps/app/backup.ts';
import { appBackup, current, ns, pv, pvc, ref, settleUploads, uid, uploads, world } from './backup-world.ts';

const stranger = 'ffffffff-0000-4000-8000-000000000000';

describe('app-backup: reruns and hostile inputs', () => {
  it('a rerun after a crash past the DataUploads creates nothing twice and adopts its own DataUploads', async () => {
    const w = world({ ab: appBackup() });
    let created = 0;
    w.kube.on('create', 'DataUpload', () => {
      if (++created === 2) w.kube.failNext('replaceStatus', 'AppBackup', new Error('the pod was killed'));
    });
    await assert.rejects(runAppBackup(w.ctx, ref), /the pod was killed/);
    assert.equal(current(w).status?.phase, 'InProgress');
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    assert.equal(current(w).status?.phase, 'Completed');
    assert.deepEqual(w.journal, ['pre:freeze', 'group-snapshot:data,wal', 'post:thaw'], 'hooks and snapshot once');
    assert.equal(uploads(w).length, 2);
    assert.equal(w.kube.actions.filter((a) => a.verb === 'create' && a.kind === 'VolumeGroupSnapshot').length, 1);
  });

  it('a DataUpload of the same name not owned by this AppBackup is not adopted: Failed saying so, its own canceled', async () => {
    const foreign: KubeObject = {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'DataUpload',
      metadata: {
        name: 'db-wal',
        namespace: ns,
        labels: { 'ferry.dev/app-backup': 'db' },
        ownerReferences: [{ apiVersion: 'ferry.dev/v1alpha1', kind: 'AppBackup', name: 'db', uid: stranger }],
      },
      spec: { sourcePVC: 'wal', backupStorageLocation: 'default' },
    };
    const w = world({ ab: appBackup(), objects: [foreign] });
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Failed');
    assert.match(ab.status!.message!, /DataUpload app\/db-wal exists and is not owned by AppBackup db/);
    const byName = new Map(uploads(w).map((d) => [d.metadata.name, d]));
    assert.equal((byName.get('db-data')!.spec as { cancel?: boolean }).cancel, true);
    assert.equal((byName.get('db-wal')!.spec as { cancel?: boolean }).cancel, undefined, 'the foreign one untouched');
    assert.equal(w.kube.all('VolumeGroupSnapshot').length, 0);
  });

  it('a VolumeSnapshot owned by another group snapshot is never taken as a member', async () => {
    const decoy: KubeObject = {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: {
        name: 'aaa-decoy',
        namespace: ns,
        ownerReferences: [{ apiVersion: 'x', kind: 'VolumeGroupSnapshot', name: `ferry-app-${uid}`, uid: stranger }],
      },
      spec: { source: { persistentVolumeClaimName: 'data' } },
      status: { readyToUse: true, creationTime: '2025-01-01T00:00:00Z' },
    };
    const w = world({ ab: appBackup() });
    // cut with the group, listed after its members
    w.kube.on('create', 'VolumeGroupSnapshot', (_vgs, k) => k.seed(decoy));
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(
      current(w).status?.volumes?.map((v) => v.volumeSnapshot),
      ['snapshot-data-member', 'snapshot-wal-member'],
    );
  });

  it('a VolumeSnapshot of the per-volume name not owned by this AppBackup fails the backup instead of being used', async () => {
    const squatter: KubeObject = {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: { name: volumeSnapshotName(uid, 'data'), namespace: ns },
      spec: { source: { persistentVolumeClaimName: 'wal' } },
      status: { readyToUse: true, creationTime: '2025-01-01T00:00:00Z' },
    };
    const w = world({ group: false, ab: appBackup(), objects: [squatter] });
    await runAppBackup(w.ctx, ref);
    assert.equal(current(w).status?.phase, 'Failed');
    assert.match(current(w).status!.message!, /not owned by AppBackup db/);
    assert.ok(
      w.kube.peek({ kind: 'VolumeSnapshot', namespace: ns, name: volumeSnapshotName(uid, 'data') }),
      'not deleted',
    );
    assert.deepEqual(w.journal.at(-1), 'post:thaw');
  });

  it('the selector picks claims of its own namespace only', async () => {
    const picked = pvc('logs', ns, { labels: { tier: 'db' } });
    const elsewhere = pvc('logs', 'other', { labels: { tier: 'db' } });
    const w = world({
      ab: appBackup({ pvcs: ['data'], selector: { matchLabels: { tier: 'db' } } }),
      objects: [picked, pv(picked), elsewhere, pv(elsewhere)],
    });
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(
      current(w).status?.volumes?.map((v) => v.pvc),
      ['data', 'logs'],
    );
    assert.deepEqual(
      uploads(w).map((d) => d.metadata.namespace),
      [ns, ns],
    );
    assert.deepEqual(
      w.kube.all('PersistentVolumeClaim').find((c) => c.metadata.namespace === 'other')?.metadata.labels,
      {
        tier: 'db',
      },
    );
  });

  it('FailedValidation names each problem, before any hook, finalizer or snapshot', async () => {
    const w = world({
      ab: appBackup({
        pvcs: ['data', 'wal', 'gone'],
        backupStorageLocation: 'closed',
        volumeSnapshotClassName: 'nope',
      }),
    });
    w.kube.mutate({ kind: 'PersistentVolumeClaim', namespace: ns, name: 'wal' }, (o) => {
      o.status = { phase: 'Pending' };
    });
    w.kube.seed({
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name: 'closed', namespace: 'ferry-system' },
      spec: { allowedNamespaces: ['someone-else'] },
    });
    const out = await runAppBackup(w.ctx, ref);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'FailedValidation');
    assert.equal(out.outcome, 'Failed');
    const message = ab.status!.message!;
    for (const part of [
      /PersistentVolumeClaim gone does not exist in namespace app/,
      /PersistentVolumeClaim wal is Pending, not Bound/,
      /BackupStorageLocation closed does not allow namespace app/,
      /VolumeSnapshotClass nope does not exist/,
    ])
      assert.match(message, part);
    assert.deepEqual(w.journal, []);
    assert.equal(ab.metadata.finalizers, undefined);
  });

  it('nothing named and nothing selected is a FailedValidation', async () => {
    const w = world({ ab: appBackup({ pvcs: [], selector: { matchLabels: { tier: 'none' } } }) });
    await runAppBackup(w.ctx, ref);
    assert.match(current(w).status!.message!, /no PersistentVolumeClaim of namespace app is named/);
  });

  it('a rerun of a terminal AppBackup only removes a finalizer left behind', async () => {
    const done = appBackup(undefined, { phase: 'Completed', volumes: [{ pvc: 'data', dataUpload: 'db-data' }] });
    done.metadata.finalizers = ['ferry.dev/app-backup'];
    const w = world({ ab: done });
    const out = await runAppBackup(w.ctx, ref);
    assert.equal(out.outcome, 'Skipped');
    assert.deepEqual(current(w).metadata.finalizers, []);
    assert.equal(current(w).status?.phase, 'Completed');
    assert.deepEqual(w.journal, []);
  });

  it('an AppBackup the sweep gave up on between the hooks still gets its post hooks when the step runs again', async () => {
    const given = appBackup(undefined, {
      phase: 'Failed',
      message: 'the step failed 5 times',
      hooksStarted: true,
      volumes: [{ pvc: 'data' }, { pvc: 'wal' }],
    });
    given.metadata.finalizers = ['ferry.dev/app-backup'];
    const w = world({ ab: given });
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(w.journal, ['post:thaw']);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Failed');
    assert.deepEqual(
      ab.status?.hooks?.map((r) => r.stage),
      ['post'],
    );
    assert.deepEqual(ab.metadata.finalizers, []);
  });

  it('an apiserver error that is not a denial leaves the phase for the next attempt', async () => {
    const w = world({ ab: appBackup({ hooks: {} }) });
    w.kube.failNext('create', 'DataUpload', new KubeError(500, 'InternalError', 'etcd is down'));
    await assert.rejects(runAppBackup(w.ctx, ref), /etcd is down/);
    assert.equal(current(w).status?.phase, 'InProgress');
  });
});
