// What stops an AppBackup early, and what it leaves: a failed pre hook, a snapshot that never comes, a cancel or a
// deletion (during a hook, during the uploads), a step process that died between the hooks. In every case post
// hooks run once pre hooks started, claim labels and snapshots are removed, and the finalizer goes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { groupMemberLabel, groupSnapshotName } from '../../../src/shared/app/names.ts';
import { KubeError } from '../../../src/shared/kube/errors.ts';
import { interruptedMessage, runAppBackup } from '../../../src/steps/app/backup.ts';
import { appBackup, current, ns, ref, runsOf, settleUploads, uid, uploads, world, type World } from './backup-world.ts';

function assertNothingLeft(w: World): void {
  assert.equal(w.kube.all('VolumeGroupSnapshot').length, 0, 'group snapshot deleted');
  assert.equal(
    w.kube.all('VolumeSnapshot').filter((s) => s.metadata.name.startsWith('ferry-app-')).length,
    0,
    'per-volume snapshots deleted',
  );
  for (const c of w.kube.all('PersistentVolumeClaim'))
    assert.equal(c.metadata.labels?.[groupMemberLabel(uid)], undefined, `claim label left on ${c.metadata.name}`);
  assert.deepEqual(current(w)?.metadata.finalizers ?? [], [], 'finalizer removed');
}

describe('app-backup: stopping early', () => {
  it('a pre hook failing with onError Fail: no snapshot, post hooks ran, Failed with the hook and its output', async () => {
    const w = world({ ab: appBackup() });
    w.hookAnswer = async (stage, hooks) =>
      stage === 'pre'
        ? { runs: runsOf(stage, hooks, 'Failed'), failure: 'hook freeze in pod db-0 exited 3: freeze: disk busy' }
        : { runs: runsOf(stage, hooks) };
    const out = await runAppBackup(w.ctx, ref);
    assert.deepEqual(w.journal, ['pre:freeze', 'post:thaw']);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Failed');
    assert.equal(out.outcome, 'Failed');
    assert.match(ab.status!.message!, /pre hook failed, no snapshot was taken: hook freeze in pod db-0.*disk busy/);
    assert.equal(uploads(w).length, 0);
    assertNothingLeft(w);
  });

  it('a group snapshot never ready: Failed at operationTimeout, post hooks ran, labels and the snapshot removed', async () => {
    const w = world({ ab: appBackup({ operationTimeout: '30s' }) });
    w.snapshotsHang = true;
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(w.journal, ['pre:freeze', 'group-snapshot:data,wal', 'post:thaw']);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Failed');
    assert.match(ab.status!.message!, /was not ready within 30s/);
    assertNothingLeft(w);
  });

  it('spec.cancel while a pre hook hangs: the hook is stopped, post hooks run, nothing is snapshotted, Canceled', async () => {
    const w = world({ ab: appBackup() });
    let killed = false;
    w.hookAnswer = async (stage, hooks, signal) => {
      if (stage === 'post') return { runs: runsOf(stage, hooks) };
      w.kube.mutate({ kind: 'AppBackup', namespace: ns, name: 'db' }, (o) => {
        (o.spec as { cancel?: boolean }).cancel = true;
      });
      await new Promise<void>((resolve) => signal!.addEventListener('abort', () => resolve(), { once: true }));
      killed = true;
      return { runs: runsOf(stage, hooks, 'Failed'), failure: 'freeze was killed' };
    };
    const out = await runAppBackup(w.ctx, ref);
    assert.ok(killed, 'the running hook saw the cancel');
    assert.deepEqual(w.journal, ['pre:freeze', 'post:thaw']);
    assert.equal(out.outcome, 'Canceled');
    assert.equal(current(w).status?.phase, 'Canceled');
    assert.match(current(w).status!.message!, /spec\.cancel/);
    assertNothingLeft(w);
  });

  it('spec.cancel during Uploading reaches every DataUpload; Canceled once they end, nothing left behind', async () => {
    const w = world({ ab: appBackup() });
    let polls = 0;
    w.onSleep = () => {
      polls++;
      if (polls === 1)
        w.kube.mutate({ kind: 'AppBackup', namespace: ns, name: 'db' }, (o) => {
          (o.spec as { cancel?: boolean }).cancel = true;
        });
      // the DataUploads' own steps end them once canceled
      for (const du of uploads(w))
        if ((du.spec as { cancel?: boolean }).cancel)
          w.kube.mutate({ kind: 'DataUpload', namespace: ns, name: du.metadata.name }, (o) => {
            o.status = { phase: 'Canceled' };
          });
    };
    const out = await runAppBackup(w.ctx, ref);
    assert.equal(out.outcome, 'Canceled');
    assert.equal(uploads(w).length, 2);
    for (const du of uploads(w)) assert.equal((du.spec as { cancel?: boolean }).cancel, true, du.metadata.name);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Canceled');
    assert.deepEqual(
      ab.status?.volumes?.map((v) => v.phase),
      ['Canceled', 'Canceled'],
    );
    assertNothingLeft(w);
  });

  it('a deletion during the snapshot wait: post hooks run, Canceled, the finalizer goes and the AppBackup with it', async () => {
    const w = world({ ab: appBackup() });
    w.snapshotsHang = true;
    let deleted = false;
    w.onSleep = () => {
      if (deleted || w.kube.all('VolumeGroupSnapshot').length === 0) return;
      deleted = true;
      void w.kube.delete({ kind: 'AppBackup', namespace: ns, name: 'db' });
    };
    const out = await runAppBackup(w.ctx, ref);
    assert.equal(out.outcome, 'Canceled');
    assert.deepEqual(w.journal, ['pre:freeze', 'group-snapshot:data,wal', 'post:thaw']);
    assert.equal(current(w), undefined, 'the AppBackup is gone once its finalizer is removed');
    assert.equal(w.kube.all('VolumeGroupSnapshot').length, 0);
    for (const c of w.kube.all('PersistentVolumeClaim'))
      assert.equal(c.metadata.labels?.[groupMemberLabel(uid)], undefined);
  });

  it('a rerun after the process died between the hooks runs post hooks only, takes no snapshot of the dead run, and ends Failed', async () => {
    const dead = appBackup(undefined, {
      phase: 'InProgress',
      hooksStarted: true,
      hooks: runsOf('pre', [{ name: 'freeze', selector: {}, command: ['x'] }]),
      volumes: [{ pvc: 'data' }, { pvc: 'wal' }],
    });
    dead.metadata.finalizers = ['ferry.dev/app-backup'];
    const leftover = {
      apiVersion: 'groupsnapshot.storage.k8s.io/v1',
      kind: 'VolumeGroupSnapshot',
      metadata: {
        name: groupSnapshotName(uid),
        namespace: ns,
        ownerReferences: [{ apiVersion: 'ferry.dev/v1alpha1', kind: 'AppBackup', name: 'db', uid, controller: true }],
      },
      spec: {},
      status: { readyToUse: true },
    };
    const w = world({ ab: dead, objects: [leftover] });
    w.kube.mutate({ kind: 'PersistentVolumeClaim', namespace: ns, name: 'data' }, (o) => {
      o.metadata.labels = { [groupMemberLabel(uid)]: 'true' };
    });
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(w.journal, ['post:thaw'], 'post hooks first, no pre hook and no new snapshot');
    const ab = current(w);
    assert.equal(ab.status?.phase, 'Failed');
    assert.equal(ab.status?.message, interruptedMessage);
    assert.equal(uploads(w).length, 0, "the dead run's snapshot is not uploaded");
    assertNothingLeft(w);
  });

  it('a rerun after the snapshots were recorded but before post hooks: post hooks run, then the uploads', async () => {
    const ab = appBackup(undefined, {
      phase: 'InProgress',
      hooksStarted: true,
      hooks: runsOf('pre', [{ name: 'freeze', selector: {}, command: ['x'] }]),
      snapshotTime: '2025-03-01T10:00:05Z',
      consistency: 'PerVolume',
      volumes: [
        { pvc: 'data', volumeSnapshot: `ferry-app-${uid}-data` },
        { pvc: 'wal', volumeSnapshot: `ferry-app-${uid}-wal` },
      ],
    });
    const w = world({ ab });
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(w.journal, ['post:thaw']);
    assert.equal(current(w).status?.phase, 'Completed');
  });

  it('the pod ending (SIGTERM) during a pre hook runs the post hooks before it exits; the next attempt ends Failed', async () => {
    const w = world({ ab: appBackup() });
    const term = new AbortController();
    w.ctx.signal = term.signal;
    w.hookAnswer = async (stage, hooks, signal) => {
      if (stage === 'post') {
        assert.ok(!signal?.aborted, 'post hooks are not killed by the ending pod');
        return { runs: runsOf(stage, hooks) };
      }
      term.abort(new Error('SIGTERM'));
      return { runs: runsOf(stage, hooks, 'TimedOut'), failure: 'freeze was killed' };
    };
    await assert.rejects(runAppBackup(w.ctx, ref), (err) => !(err instanceof assert.AssertionError));
    assert.deepEqual(w.journal, ['pre:freeze', 'post:thaw']);
    assert.equal(current(w).status?.phase, 'InProgress');
    w.ctx.signal = new AbortController().signal;
    await runAppBackup(w.ctx, ref);
    assert.deepEqual(w.journal, ['pre:freeze', 'post:thaw'], 'post hooks ran once');
    assert.equal(current(w).status?.phase, 'Failed');
    assert.equal(current(w).status?.message, interruptedMessage);
    assertNothingLeft(w);
  });

  it('a status write that meets a Conflict rereads and keeps the spec.cancel written meanwhile', async () => {
    const w = world({ ab: appBackup({ hooks: {} }) });
    let raced = false;
    w.kube.on('create', 'DataUpload', (_du, k) => {
      if (raced) return;
      raced = true;
      k.mutate({ kind: 'AppBackup', namespace: ns, name: 'db' }, (o) => {
        (o.spec as { cancel?: boolean }).cancel = true;
      });
    });
    w.onSleep = () => settleUploads(w, { data: 'Canceled', wal: 'Canceled' });
    await runAppBackup(w.ctx, ref);
    const ab = current(w);
    assert.equal(ab.spec.cancel, true);
    assert.equal(ab.status?.phase, 'Canceled');
  });

  it('a DataUpload the dispatcher refuses fails that volume only', async () => {
    const w = world({ ab: appBackup() });
    w.kube.failNext('create', 'DataUpload', new KubeError(403, 'Forbidden', 'admission webhook denied: no'));
    w.onSleep = () => settleUploads(w);
    await runAppBackup(w.ctx, ref);
    const ab = current(w);
    assert.equal(ab.status?.phase, 'PartiallyFailed');
    assert.match(ab.status!.volumes![0].message!, /DataUpload refused: admission webhook denied/);
  });
});
