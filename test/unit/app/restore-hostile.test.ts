// The app-restore step against hostile input: another namespace's backup without the location's permission (and
// admission refusing the DataDownload), a 253-character volume name, a volume named like an Object property, and a
// DataDownload squatting the name the restore would use, before validation and after it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { DataDownload } from '../../../src/shared/api/types.ts';
import { KubeError } from '../../../src/shared/kube/errors.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { runAppRestore } from '../../../src/steps/app/restore.ts';
import { location } from '../steps/harness.ts';
import { appBackup, appRestore, context, downloads, restoreOf, world } from './restore-world.ts';

const ref = { namespace: 'app', name: 'back' };
type Download = DataDownload & KubeObject;

describe('app-restore with hostile input', () => {
  it('an AppBackup in another namespace without the location allowing it is refused; with the rule it restores', async () => {
    const denied = world(appBackup(), [], appRestore({ appBackup: { name: 'db', namespace: 'app' } }, 'restore'));
    await runAppRestore(context(denied), { namespace: 'restore', name: 'back' });
    const r = restoreOf(denied, 'restore');
    assert.equal(r.status?.phase, 'FailedValidation');
    const refusal =
      'spec.appBackup.namespace: no BackupStorageLocation allows restores from namespace app into namespace restore (see their spec.crossNamespaceRestores)';
    assert.equal(r.status?.message, refusal);
    assert.deepEqual(denied.all('DataDownload'), []);
    // an AppBackup that does not exist there is refused in the same words: the step does not tell a user what
    // another namespace holds
    const absent = world(appBackup(), [], appRestore({ appBackup: { name: 'secret', namespace: 'app' } }, 'restore'));
    await runAppRestore(context(absent), { namespace: 'restore', name: 'back' });
    assert.equal(restoreOf(absent, 'restore').status?.message, refusal);
    // another location allowing it does not make the backup's own location allow it
    const [other] = location(['app', 'restore']);
    other.metadata.name = 'other';
    (other.spec as Record<string, unknown>).crossNamespaceRestores = [{ from: 'app', to: ['restore'] }];
    const elsewhere = world(
      appBackup(),
      [],
      appRestore({ appBackup: { name: 'db', namespace: 'app' } }, 'restore'),
      other,
    );
    await runAppRestore(context(elsewhere), { namespace: 'restore', name: 'back' });
    assert.match(
      restoreOf(elsewhere, 'restore').status?.message ?? '',
      /spec\.appBackup\.namespace: BackupStorageLocation "default" does not allow restores from namespace app into namespace restore \(see its spec\.crossNamespaceRestores\)/,
    );
    assert.deepEqual(elsewhere.all('DataDownload'), []);

    const allowed = world(
      appBackup(),
      [{ from: 'app', to: ['restore'] }],
      appRestore({ appBackup: { name: 'db', namespace: 'app' } }, 'restore'),
    );
    await runAppRestore(context(allowed), { namespace: 'restore', name: 'back' });
    assert.equal(restoreOf(allowed, 'restore').status?.phase, 'Completed');
    const [dd] = downloads(allowed);
    assert.equal(dd.metadata.namespace, 'restore');
    assert.equal(dd.spec.sourceNamespace, 'app');
    assert.deepEqual(dd.spec.source, { dataUpload: { name: 'db-data', namespace: 'app' } });
  });

  it('a DataDownload refused by admission fails its volume with the denial in the message', async () => {
    const kube = world(
      appBackup(),
      [{ from: 'app', to: ['restore'] }],
      appRestore({ appBackup: { name: 'db', namespace: 'app' } }, 'restore'),
    );
    const denial =
      'admission webhook "dispatcher.ferry.dev" denied the request: spec.sourceNamespace: restores from namespace app into namespace restore are not allowed';
    kube.failNext('create', 'DataDownload', new KubeError(403, 'Forbidden', denial));
    await runAppRestore(context(kube), { namespace: 'restore', name: 'back' });
    const r = restoreOf(kube, 'restore');
    assert.equal(r.status?.phase, 'PartiallyFailed');
    assert.ok(r.status?.message?.includes(denial), r.status?.message);
    assert.equal(r.status?.volumes?.[0].phase, 'Failed');
  });

  it('a volume name of 253 characters gives a valid DataDownload name and restores into the same claim name', async () => {
    const long = `v${'x'.repeat(251)}z`;
    const kube = world(appBackup([{ pvc: long, phase: 'Completed' }]), [], appRestore());
    assert.equal((await runAppRestore(context(kube), ref)).outcome, 'Advanced');
    const [dd] = downloads(kube);
    assert.ok(dd.metadata.name.length <= 253, `${dd.metadata.name.length} characters`);
    assert.match(dd.metadata.name, /^back-v[-a-z0-9]*[a-z0-9]$/);
    assert.equal(dd.spec.targetPVC.name, long);
    assert.equal(restoreOf(kube).status?.volumes?.[0].dataDownload, dd.metadata.name);
  });

  it('a volume named like an Object property restores into its own name', async () => {
    const kube = world(appBackup([{ pvc: 'constructor', phase: 'Completed' }]), [], appRestore({ pvcNames: {} }));
    assert.equal((await runAppRestore(context(kube), ref)).outcome, 'Advanced');
    assert.equal(downloads(kube)[0].spec.targetPVC.name, 'constructor');
  });

  it('a DataDownload squatting the deterministic name is never adopted, read or canceled', async () => {
    const squatter: Download = {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'DataDownload',
      metadata: { name: 'back-data', namespace: 'app', labels: { 'ferry.dev/app-restore': 'back' } },
      spec: {
        targetPVC: { name: 'elsewhere' },
        backupStorageLocation: 'default',
        source: { snapshotID: 'abcdef01' },
      },
      status: { phase: 'InProgress' },
    };
    const kube = world(appBackup(), [], appRestore(), squatter);
    await runAppRestore(context(kube), ref);
    const r = restoreOf(kube);
    assert.equal(r.status?.phase, 'FailedValidation');
    assert.match(
      r.status?.message ?? '',
      /volume "data": DataDownload app\/back-data already exists and does not belong to this AppRestore/,
    );
    assert.deepEqual(
      downloads(kube).map((d) => d.metadata.name),
      ['back-data'],
    );
  });

  it('a squatter that appears after validation fails its volume only, and a cancel leaves it alone', async () => {
    const kube = world(appBackup(), [], appRestore());
    kube.on('replaceStatus', 'AppRestore', (o) => {
      if (
        (o.status as { phase?: string }).phase !== 'InProgress' ||
        kube.peek({ kind: 'DataDownload', namespace: 'app', name: 'back-wal' })
      )
        return;
      kube.seed({
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'DataDownload',
        metadata: { name: 'back-wal', namespace: 'app', labels: { 'ferry.dev/app-restore': 'back' } },
        spec: { targetPVC: { name: 'wal' }, backupStorageLocation: 'default', source: { snapshotID: 'abcdef01' } },
        status: { phase: 'InProgress' },
      });
    });
    const ctx = context(
      kube,
      (dd) => (dd.metadata.ownerReferences ? 'InProgress' : undefined),
      () => {
        if (ctx.sleeps === 2)
          kube.mutate(
            { kind: 'AppRestore', namespace: 'app', name: 'back' },
            (o) => ((o.spec as { cancel?: boolean }).cancel = true),
          );
      },
    );
    assert.equal((await runAppRestore(ctx, ref)).outcome, 'Canceled');
    const r = restoreOf(kube);
    assert.match(
      r.status?.volumes?.[1].message ?? '',
      /DataDownload back-wal already exists and does not belong to this AppRestore; it was not adopted/,
    );
    const wal = kube.peek<Download>({ kind: 'DataDownload', namespace: 'app', name: 'back-wal' })!;
    assert.equal(wal.spec.cancel, undefined);
    assert.equal(wal.status?.phase, 'InProgress');
    assert.equal(kube.peek<Download>({ kind: 'DataDownload', namespace: 'app', name: 'back-data' })!.spec.cancel, true);
  });
});
