// Issue 33, CopyPolicies end to end on the box (NOT run by the helper who wrote it: it needs the cluster in a box):
// a backup that completes gets its copy from the webhook well before the next sweep, named after the backup and the
// policy, owned by the backup and labelled with the policy; a policy whose destination does not allow the namespace
// makes nothing; the copy completes, the destination lists it (`ferry location backups`), the policy's status counts
// it, and deleting the backup deletes its copy.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { policyCopyName } from '../../src/shared/copy/names.ts';
import { ferryOK, parseJSON } from '../support/ferry-cli.ts';
import { randomBytes } from '../support/repo.ts';
import { api, boundClaim, completedBackup, ferryNamespace, uploads, world } from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
const copies = (ns: string): string => `${api}/namespaces/${ns}/datacopies`;
const policies = `${api}/namespaces/${ferryNamespace}/copypolicies`;
const minute = 60_000;

/** A second location in the same bucket under another prefix and password, allowing `allowed`. */
async function location(name: string, allowed: string[]): Promise<void> {
  const { kube } = w.cluster;
  await kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${name}-password` },
    stringData: { password: `secret of ${name}` },
  });
  await kube.create(`${api}/namespaces/${ferryNamespace}/backupstoragelocations`, {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupStorageLocation',
    metadata: { name },
    spec: {
      ...w.spec,
      s3: { ...w.spec.s3, prefix: `${w.spec.s3.prefix}-${name}` },
      repositoryPassword: { name: `${name}-password`, key: 'password' },
      allowedNamespaces: allowed,
    },
  });
}

async function policy(name: string, destinationLocation: string): Promise<void> {
  await w.cluster.kube.create(policies, {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'CopyPolicy',
    metadata: { name },
    spec: { sourceLocation: w.location, destinationLocation },
  });
}

before(
  async () => {
    w = await world('copy-policy', ({ app }) => ({ allowedNamespaces: [app] }));
    const { path } = await boundClaim(w.cluster, w.app, 'data', '64Mi');
    await writeFile(join(path, 'a.bin'), randomBytes(2 * 1024 * 1024, 33));
    await location('site-b', [w.app]);
    await location('closed', [w.other]);
    await policy('offsite', 'site-b');
    await policy('refused', 'closed');
  },
  { timeout: 30 * minute },
);
after(() => w?.cluster.cleanup());

describe('copy policies', { timeout: 40 * minute }, () => {
  it('copies a completed backup at once, lists it in the destination, and deletes it with the backup', async () => {
    const du = await completedBackup(w, w.app, 'b1');
    const name = policyCopyName('b1', 'offsite');
    // the webhook acts on the status write that completed the backup; the sweep alone could take a minute more
    const copy = await w.cluster.kube.waitFor(
      `${copies(w.app)}/${name}`,
      'the policy’s DataCopy',
      (c: Obj) => c,
      30_000,
    );
    assert.equal(copy.spec.dataUpload, 'b1');
    assert.equal(copy.spec.backupStorageLocation, 'site-b');
    assert.equal(copy.spec.policy, 'offsite');
    assert.equal(copy.metadata.labels['ferry.dev/copy-policy'], 'offsite');
    assert.deepEqual(
      copy.metadata.ownerReferences.map((o: Obj) => [o.kind, o.name, o.uid, o.blockOwnerDeletion]),
      [['DataUpload', 'b1', du.metadata.uid, false]],
    );
    const done = await w.cluster.kube.waitFor(
      `${copies(w.app)}/${name}`,
      'the copy to complete',
      (c: Obj) => (['Completed', 'Failed'].includes(c.status?.phase) ? c : undefined),
      10 * minute,
    );
    assert.equal(done.status.phase, 'Completed', done.status.message);

    const listed = parseJSON<{ backups: { namespace: string; dataUpload?: string; snapshotID: string }[] }>(
      await ferryOK(['location', 'backups', 'site-b', '--namespace', w.app, '--json'], {
        password: null,
        env: { KUBECONFIG: w.cluster.kubeconfig },
      }),
    );
    assert.deepEqual(
      listed.backups.map((b) => [b.namespace, b.dataUpload, b.snapshotID]),
      [[w.app, 'b1', done.status.snapshotID]],
    );
    const all = (await w.cluster.kube.get(copies(w.app))) as Obj;
    assert.deepEqual(
      all.items.map((c: Obj) => c.spec.backupStorageLocation),
      ['site-b'],
      'the location "closed" does not allow the namespace: its policy made nothing',
    );
    const status = await w.cluster.kube.waitFor(
      `${policies}/offsite`,
      'the policy status to count the copy',
      (p: Obj) => (p.status?.copiesCompleted === 1 ? p.status : undefined),
      3 * minute,
    );
    assert.equal(status.lastCopyTime, done.status.completionTimestamp);
    const refused = await w.cluster.kube.waitFor(
      `${policies}/refused`,
      'the refused policy’s status',
      (p: Obj) => p.status,
      3 * minute,
    );
    assert.equal(refused.copiesCompleted, 0);

    await w.cluster.kube.delete(`${uploads(w.app)}/b1`);
    await w.cluster.kube.waitFor(
      `${copies(w.app)}?fieldSelector=metadata.name=${name}`,
      'the copy to go with its backup',
      (l: Obj) => (l.items.length === 0 ? true : undefined),
      10 * minute,
    );
  });
});
