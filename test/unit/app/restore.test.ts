// The app-restore step against an in-memory cluster: one owned DataDownload per volume, status aggregated until
// every volume ended, validation before anything is made (a target that is a bound PVC among it), cancel, and a
// rerun that makes nothing twice. Hostile input is in ./restore-hostile.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { KubeError } from '../../../src/shared/kube/errors.ts';
import { runAppRestore } from '../../../src/steps/app/restore.ts';
import { claim } from '../dispatcher/world.ts';
import { eventsOf } from '../steps/harness.ts';
import { appBackup, appRestore, context, downloads, restoreOf, restoreUID, world } from './restore-world.ts';

const ref = { namespace: 'app', name: 'back' };

describe('app-restore', () => {
  it('restores every volume through its own DataDownload, owned and labelled, and ends Completed with totals', async () => {
    const kube = world(appBackup(), [], appRestore({ pvcNames: { data: 'data-copy' }, storageClassName: 'fast' }));
    const out = await runAppRestore(context(kube), ref);
    assert.equal(out.outcome, 'Advanced', out.reason);
    const [data, wal] = downloads(kube);
    assert.deepEqual([data.metadata.name, wal.metadata.name], ['back-data', 'back-wal']);
    assert.deepEqual(data.spec, {
      targetPVC: { name: 'data-copy', storageClassName: 'fast' },
      backupStorageLocation: 'default',
      source: { dataUpload: { name: 'db-data', namespace: 'app' } },
    });
    assert.equal(wal.spec.targetPVC.name, 'wal');
    assert.deepEqual(data.metadata.labels, { 'ferry.dev/app-restore': 'back' });
    assert.deepEqual(data.metadata.ownerReferences, [
      { apiVersion: 'ferry.dev/v1alpha1', kind: 'AppRestore', name: 'back', uid: restoreUID, controller: true },
    ]);
    const r = restoreOf(kube);
    assert.equal(r.status?.phase, 'Completed');
    assert.equal(r.status?.volumesDone, '2/2');
    assert.deepEqual(
      r.status?.volumes?.map((v) => [v.pvc, v.targetPVC, v.phase, v.bytesDone]),
      [
        ['data', 'data-copy', 'Completed', 1000],
        ['wal', 'wal', 'Completed', 1000],
      ],
    );
    assert.ok(r.status?.startTimestamp && r.status.completionTimestamp);
    assert.equal(r.status?.conditions?.find((c) => c.type === 'Restored')?.status, 'True');
    assert.deepEqual(
      eventsOf(kube).map((e) => e.reason),
      ['RestoreStarted', 'Completed'],
    );
  });

  it('shows each volume progressing in status while the others run', async () => {
    const kube = world(appBackup(), [], appRestore());
    let step = 0;
    const ctx = context(
      kube,
      (dd) => (dd.spec.targetPVC.name === 'data' || step > 2 ? 'Completed' : 'InProgress'),
      () => {
        step++;
        if (step === 2) {
          const r = restoreOf(kube);
          assert.equal(r.status?.phase, 'InProgress');
          assert.equal(r.status?.volumesDone, '1/2');
          assert.deepEqual(
            r.status?.volumes?.map((v) => v.phase),
            ['Completed', 'InProgress'],
          );
        }
      },
    );
    assert.equal((await runAppRestore(ctx, ref)).outcome, 'Advanced');
    assert.ok(step >= 3);
  });

  it('a volume whose transfer fails gives PartiallyFailed naming it; all failing gives Failed', async () => {
    const kube = world(appBackup(), [], appRestore());
    const out = await runAppRestore(
      context(kube, (dd) => (dd.spec.targetPVC.name === 'wal' ? 'Failed' : 'Completed')),
      ref,
    );
    assert.equal(out.outcome, 'Failed');
    const r = restoreOf(kube);
    assert.equal(r.status?.phase, 'PartiallyFailed');
    assert.equal(r.status?.volumesDone, '1/2');
    assert.match(
      r.status?.message ?? '',
      /Restored 1 of 2 volume\(s\); not restored: wal \(Failed: the transfer broke\)/,
    );
    assert.equal(eventsOf(kube).at(-1)?.reason, 'PartiallyFailed');

    const none = world(appBackup(), [], appRestore());
    await runAppRestore(
      context(none, () => 'Failed'),
      ref,
    );
    assert.equal(restoreOf(none).status?.phase, 'Failed');
  });

  describe('refuses before any DataDownload exists, naming what is wrong', () => {
    const partial = appBackup(
      [
        { pvc: 'data', phase: 'Completed' },
        { pvc: 'wal', phase: 'Failed' },
      ],
      'PartiallyFailed',
    );
    const cases: [string, ReturnType<typeof world>, RegExp][] = [
      [
        'no such AppBackup',
        world(appBackup(), [], appRestore({ appBackup: { name: 'gone' } })),
        /spec\.appBackup: AppBackup app\/gone does not exist/,
      ],
      [
        'an AppBackup still uploading',
        world(appBackup(undefined, 'Uploading'), [], appRestore()),
        /AppBackup app\/db is Uploading; only a Completed or PartiallyFailed/,
      ],
      [
        'a volume the backup does not hold',
        world(appBackup(), [], appRestore({ volumes: ['data', 'logs'] })),
        /spec\.volumes\[1\]: AppBackup app\/db holds no volume "logs"; it holds data, wal/,
      ],
      [
        'a volume that did not complete',
        world(partial, [], appRestore({ volumes: ['wal'] })),
        /spec\.volumes\[0\]: volume "wal" of AppBackup app\/db is Failed, not Completed/,
      ],
      [
        'a volume asked for twice',
        world(appBackup(), [], appRestore({ volumes: ['data', 'data'] })),
        /spec\.volumes\[1\]: volume "data" is listed twice/,
      ],
      [
        'a pvcNames key that is not restored',
        world(partial, [], appRestore({ pvcNames: { wal: 'w2' } })),
        /spec\.pvcNames\.wal: "wal" is not a volume this restore brings back/,
      ],
      [
        'an invalid target name',
        world(appBackup(), [], appRestore({ pvcNames: { data: 'Data_Copy' } })),
        /spec\.pvcNames\.data: the target PVC name "Data_Copy" is not a DNS-1123 subdomain/,
      ],
      [
        'two volumes into one PVC',
        world(appBackup(), [], appRestore({ pvcNames: { data: 'wal' } })),
        /volume "wal": volumes "data" and "wal" would both restore into PVC wal/,
      ],
      [
        'a pvcNames mapping onto an existing bound PVC',
        world(appBackup(), [], appRestore({ pvcNames: { data: 'live' } }), claim('app', 'live')),
        /spec\.pvcNames\.data: PersistentVolumeClaim app\/live already exists and is bound/,
      ],
      [
        'a source claim still bound in place',
        world(appBackup(), [], appRestore(), claim('app', 'wal')),
        /volume "wal": PersistentVolumeClaim app\/wal already exists and is bound/,
      ],
    ];
    for (const [name, kube, message] of cases)
      it(name, async () => {
        const out = await runAppRestore(context(kube), ref);
        assert.equal(out.outcome, 'Failed');
        const r = restoreOf(kube);
        assert.equal(r.status?.phase, 'FailedValidation');
        assert.match(r.status?.message ?? '', message);
        assert.equal(r.status?.conditions?.find((c) => c.type === 'Validated')?.status, 'False');
        assert.deepEqual(kube.all('DataDownload'), []);
        assert.equal(eventsOf(kube).at(-1)?.reason, 'FailedValidation');
      });

    it('a DataUpload of the backup deleted since', async () => {
      const kube = world(appBackup(), [], appRestore());
      await kube.delete({ kind: 'DataUpload', namespace: 'app', name: 'db-wal' });
      await runAppRestore(context(kube), ref);
      assert.match(restoreOf(kube).status?.message ?? '', /volume "wal": its DataUpload app\/db-wal no longer exists/);
      assert.deepEqual(kube.all('DataDownload'), []);
    });
  });

  it('restores a partially failed backup: by default its Completed volumes only', async () => {
    const backup = appBackup(
      [
        { pvc: 'data', phase: 'Completed' },
        { pvc: 'wal', phase: 'Failed' },
      ],
      'PartiallyFailed',
    );
    const kube = world(backup, [], appRestore());
    assert.equal((await runAppRestore(context(kube), ref)).outcome, 'Advanced');
    assert.deepEqual(
      downloads(kube).map((d) => d.metadata.name),
      ['back-data'],
    );
    assert.equal(restoreOf(kube).status?.volumesDone, '1/1');
  });

  it('spec.cancel cancels every running DataDownload and ends Failed "canceled"', async () => {
    const kube = world(appBackup(), [], appRestore());
    const ctx = context(
      kube,
      () => 'InProgress',
      () => {
        if (ctx.sleeps === 2)
          kube.mutate(
            { kind: 'AppRestore', namespace: 'app', name: 'back' },
            (o) => ((o.spec as { cancel?: boolean }).cancel = true),
          );
      },
    );
    const out = await runAppRestore(ctx, ref);
    assert.equal(out.outcome, 'Canceled');
    assert.deepEqual(
      downloads(kube).map((d) => d.spec.cancel),
      [true, true],
    );
    const r = restoreOf(kube);
    assert.equal(r.status?.phase, 'Failed');
    assert.equal(r.status?.message, 'canceled');
    assert.equal(r.status?.conditions?.find((c) => c.type === 'Restored')?.reason, 'Canceled');
    assert.equal(eventsOf(kube).at(-1)?.reason, 'Canceled');
  });

  it('a cancel set while the step writes its status is not lost: the conflict rereads and the step cancels', async () => {
    const kube = world(appBackup(), [], appRestore());
    let once = false;
    // the user's cancel lands between the step's read and its InProgress write (a Conflict for the step)
    kube.on('get', 'DataUpload', () => {
      if (once) return;
      once = true;
      kube.mutate(
        { kind: 'AppRestore', namespace: 'app', name: 'back' },
        (o) => ((o.spec as { cancel?: boolean }).cancel = true),
      );
    });
    const out = await runAppRestore(
      context(kube, () => 'InProgress'),
      ref,
    );
    assert.equal(out.outcome, 'Canceled');
    const r = restoreOf(kube);
    assert.equal(r.spec.cancel, true);
    assert.equal(r.status?.message, 'canceled');
  });

  it('a rerun after a crash makes nothing twice and finishes; a finished restore is left alone', async () => {
    const kube = world(appBackup(), [], appRestore());
    const crash = context(
      kube,
      () => 'InProgress',
      () => {
        throw new Error('pod killed');
      },
    );
    await assert.rejects(runAppRestore(crash, ref), /pod killed/);
    assert.equal(restoreOf(kube).status?.phase, 'InProgress');
    // the target claims are bound by the restore itself now: a rerun must not judge them again
    kube.seed(claim('app', 'data'), claim('app', 'wal'));
    const creates = () => kube.actions.filter((a) => a.verb === 'create' && a.kind === 'DataDownload').length;
    assert.equal(creates(), 2);
    assert.equal((await runAppRestore(context(kube), ref)).outcome, 'Advanced');
    assert.equal(creates(), 2);
    assert.equal(restoreOf(kube).status?.phase, 'Completed');
    const again = await runAppRestore(context(kube), ref);
    assert.equal(again.outcome, 'Skipped');
    assert.equal(creates(), 2);
  });

  it('a rerun creates the DataDownloads a crash left unmade', async () => {
    const kube = world(appBackup(), [], appRestore());
    kube.failNext('create', 'DataDownload', new KubeError(500, 'InternalError', 'etcd went away'));
    await assert.rejects(runAppRestore(context(kube), ref), /etcd went away/);
    assert.deepEqual(kube.all('DataDownload'), []);
    assert.equal((await runAppRestore(context(kube), ref)).outcome, 'Advanced');
    assert.equal(downloads(kube).length, 2);
  });
});
