// The app-backup step from New to its end on an in-memory cluster: hooks around one group snapshot (or per-volume
// snapshots when the driver has no group class), one DataUpload per volume owned by the AppBackup, Uploading until
// every DataUpload ends, and a phase that says Completed only when every volume's data is stored.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { findCondition } from '../../../src/shared/kube/conditions.ts';
import { groupMemberLabel } from '../../../src/shared/app/names.ts';
import { maxObjectName } from '../../../src/shared/kube/names.ts';
import { runAppBackup } from '../../../src/steps/app/backup.ts';
import {
  appBackup,
  current,
  hook,
  ns,
  pv,
  pvc,
  ref,
  runsOf,
  settleUploads,
  uid,
  uploads,
  world,
} from './backup-world.ts';

describe('app-backup: a two-volume database', () => {
  it('runs pre hooks, one group snapshot of both claims, post hooks, then uploads; Completed only once both are stored', async () => {
    const w = world({ ab: appBackup() });
    let polls = 0;
    w.onSleep = () => {
      polls++;
      if (polls === 1) {
        const ab = current(w);
        assert.equal(ab.status?.phase, 'Uploading', 'data still moving: not Completed');
        assert.equal(ab.status?.volumesDone, '0/2');
        settleUploads(w);
      }
    };
    const out = await runAppBackup(w.ctx, ref);
    assert.equal(out.outcome, 'Advanced', out.reason);
    assert.deepEqual(w.journal, ['pre:freeze', 'group-snapshot:data,wal', 'post:thaw']);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Completed');
    assert.equal(ab.status?.consistency, 'Group');
    assert.equal(ab.status?.volumesDone, '2/2');
    assert.equal(ab.status?.bytesDone, 200);
    assert.deepEqual(
      ab.status?.volumes?.map((v) => [v.pvc, v.volumeSnapshot, v.dataUpload, v.phase, v.snapshotID]),
      [
        ['data', 'snapshot-data-member', 'db-data', 'Completed', 'id-data'],
        ['wal', 'snapshot-wal-member', 'db-wal', 'Completed', 'id-wal'],
      ],
    );
    for (const type of ['HooksSucceeded', 'GroupSnapshot', 'Uploaded'])
      assert.equal(findCondition(ab.status?.conditions, type)?.status, 'True', type);
    assert.deepEqual(ab.metadata.finalizers ?? [], [], 'finalizer removed at the end');
    const du = uploads(w).find((d) => d.metadata.name === 'db-data')!;
    assert.deepEqual(du.metadata.ownerReferences, [
      {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'AppBackup',
        name: 'db',
        uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.deepEqual(du.spec, {
      sourcePVC: 'data',
      backupStorageLocation: 'default',
      csiSnapshot: { volumeSnapshot: 'snapshot-data-member', deleteWhenDone: false },
      tags: { 'app-backup': 'db' },
    });
    assert.equal(du.metadata.labels?.['ferry.dev/app-backup'], 'db');
    assert.equal(w.kube.all('VolumeGroupSnapshot').length, 0, 'the group snapshot is deleted at the end');
    for (const c of w.kube.all('PersistentVolumeClaim'))
      assert.equal(c.metadata.labels?.[groupMemberLabel(uid)], undefined, 'claim labels removed');
    const reasons = w.kube.all('Event').map((e) => e.reason);
    assert.ok(reasons.includes('SnapshotsTaken') && reasons.includes('Completed'), reasons.join());
  });

  it('one failed volume makes UploadingPartialFailure while the other moves, and PartiallyFailed at the end', async () => {
    const w = world({ ab: appBackup() });
    let polls = 0;
    const seen: string[] = [];
    w.onSleep = () => {
      polls++;
      if (polls === 1) {
        settleUploads(w, { data: 'Failed', wal: 'InProgress' });
        w.kube.mutate({ kind: 'DataUpload', namespace: ns, name: 'db-wal' }, (o) => {
          o.status = { phase: 'InProgress', progress: { bytesDone: 10, totalBytes: 100 } };
        });
      }
      seen.push(current(w).status!.phase!);
      if (polls === 3) settleUploads(w);
    };
    const out = await runAppBackup(w.ctx, ref);
    assert.ok(seen.includes('UploadingPartialFailure'), seen.join());
    const ab = current(w);
    assert.equal(ab.status?.phase, 'PartiallyFailed');
    assert.equal(out.outcome, 'Failed');
    assert.equal(ab.status?.volumesDone, '1/2');
    assert.match(ab.status!.message!, /data \(Failed: data broke\)/);
    assert.equal(findCondition(ab.status?.conditions, 'Uploaded')?.status, 'False');
  });

  it('every volume failed is Failed, never Completed', async () => {
    const w = world({ ab: appBackup() });
    w.onSleep = () => settleUploads(w, { data: 'Failed', wal: 'Canceled' });
    await runAppBackup(w.ctx, ref);
    assert.equal(current(w).status?.phase, 'Failed');
  });

  it('a post hook failing with onError Fail leaves the end PartiallyFailed although the data is complete', async () => {
    const w = world({ ab: appBackup() });
    w.hookAnswer = async (stage, hooks) =>
      stage === 'post'
        ? { runs: runsOf(stage, hooks, 'Failed'), failure: 'thaw failed' }
        : { runs: runsOf(stage, hooks) };
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'PartiallyFailed');
    assert.equal(ab.status?.volumesDone, '2/2');
    assert.match(ab.status!.message!, /post hook failed/);
  });

  it('without a group snapshot class: one VolumeSnapshot per claim between the same hooks, PerVolume, and says why', async () => {
    const w = world({ group: false, ab: appBackup() });
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(w.journal, ['pre:freeze', 'snapshot:data', 'snapshot:wal', 'post:thaw']);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Completed');
    assert.equal(ab.status?.consistency, 'PerVolume');
    const c = findCondition(ab.status?.conditions, 'GroupSnapshot');
    assert.equal(c?.status, 'False');
    assert.equal(c?.reason, 'NotSupported');
    assert.match(c!.message, /no default VolumeGroupSnapshotClass/);
    const du = uploads(w).find((d) => d.metadata.name === 'db-data')!;
    assert.deepEqual((du.spec as { csiSnapshot: unknown }).csiSnapshot, {
      volumeSnapshot: `ferry-app-${uid}-data`,
      deleteWhenDone: true,
    });
    const vs = w.kube.all('VolumeSnapshot').find((s) => s.metadata.name === `ferry-app-${uid}-data`)!;
    assert.equal((vs.spec as { volumeSnapshotClassName?: string }).volumeSnapshotClassName, 'single');
  });

  it('claims of two CSI drivers cannot share a group snapshot: per-volume, naming both drivers', async () => {
    const other = pvc('logs');
    const w = world({ objects: [other, pv(other, 'other.csi')], ab: appBackup({ pvcs: ['data', 'logs'] }) });
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    const c = findCondition(current(w).status?.conditions, 'GroupSnapshot');
    assert.match(c!.message, /several CSI drivers \(hostpath\.csi\.k8s\.io, other\.csi\)/);
  });

  it('fits every name to a PVC named at 253 characters', async () => {
    const long = `p${'x'.repeat(252)}`;
    const claim = pvc(long);
    const w = world({ group: false, objects: [claim, pv(claim)], ab: appBackup({ pvcs: [long] }) });
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    assert.equal(current(w).status?.phase, 'Completed');
    const names = [...uploads(w), ...w.kube.all('VolumeSnapshot')].map((o) => o.metadata.name);
    assert.equal(names.length, 2);
    for (const n of names) assert.ok(n.length <= maxObjectName, `${n.length}`);
  });

  it('snapshotTime is never before the snapshot was asked for, though the controller reports whole seconds', async () => {
    const w = world({ ab: appBackup() });
    const asked = '2025-03-01T10:00:07.400Z';
    w.ctx.now = () => new Date(asked);
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    // the reactor reports the cut at 10:00:05Z, a truncated time before the pre hooks ended
    assert.equal(current(w).status?.snapshotTime, asked);
  });

  it('is shown Completed only once the snapshot controller has removed the group snapshot', async () => {
    const w = world({ ab: appBackup() });
    const key = { kind: 'VolumeGroupSnapshot' as const, namespace: ns, name: `ferry-app-${uid}` };
    w.kube.on('create', 'VolumeGroupSnapshot', (_vgs, k) =>
      k.mutate(key, (o) => {
        o.metadata.finalizers = ['groupsnapshot.storage.kubernetes.io/volumegroupsnapshot-bound-protection'];
      }),
    );
    let groupAtEnd: unknown = 'not ended';
    w.kube.on('replaceStatus', 'AppBackup', (ab, k) => {
      if ((ab.status as { phase?: string }).phase === 'Completed') groupAtEnd = k.peek(key);
    });
    w.onSleep = () => {
      settleUploads(w);
      // the controller deletes the group's content, then lets the group go
      const vgs = w.kube.peek(key);
      if (vgs?.metadata.deletionTimestamp) void w.kube.patch(key, { metadata: { finalizers: null } });
    };
    await runAppBackup(w.ctx, ref);
    assert.equal(current(w).status?.phase, 'Completed');
    assert.equal(groupAtEnd, undefined);
  });

  it('post hooks without pre hooks still run after the snapshots', async () => {
    const w = world({ ab: appBackup({ hooks: { post: [hook('notify')] } }) });
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(w.journal, ['group-snapshot:data,wal', 'post:notify']);
    assert.equal(current(w).status?.phase, 'Completed');
  });

  it('a pre hook failing with Continue is recorded, warned about, and the backup goes on', async () => {
    const w = world({ ab: appBackup({ hooks: { pre: [hook('flush', { onError: 'Continue' })], post: [] } }) });
    w.hookAnswer = async (stage, hooks) => ({ runs: runsOf(stage, hooks, 'Failed') });
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Completed');
    assert.equal(findCondition(ab.status?.conditions, 'HooksSucceeded')?.status, 'False');
    assert.equal(ab.status?.hooks?.[0].outcome, 'Failed');
    const warning = w.kube.all('Event').find((e) => e.reason === 'HookFailed');
    assert.match(String(warning?.note), /onError is Continue/);
  });
});
