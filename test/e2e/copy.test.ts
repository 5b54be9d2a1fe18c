// Issue 33 on one cluster: a DataCopy copies a Completed DataUpload's snapshot into a second location (the same
// MinIO under another prefix, with its own password Secret) through the dispatcher's copy Job; the copy is
// readable by restic with the second location's password; the copy of a later backup sends only the changed data;
// deleting the DataCopy forgets exactly its snapshot there and the backup stays Completed. Needs the DataCopy CRD
// and the webhook's rules for datacopies (installed from deploy/).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackupStorageLocationSpec } from '../../src/shared/api/types.ts';
import { repositoryLocation, repositoryPassword } from '../../src/shared/location/repository.ts';
import { randomBytes } from '../support/repo.ts';
import { resticJSON, type ResticEnv } from '../support/restic.ts';
import { api, boundClaim, completedBackup, ferryNamespace, uploads, watchUntil, world } from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let volume: string;
let siteB: string;
let siteBSpec: BackupStorageLocationSpec;
const mib = 1024 * 1024;
const copies = (ns: string) => `${api}/namespaces/${ns}/datacopies`;

before(
  async () => {
    w = await world('copy', ({ app }) => ({ allowedNamespaces: [app] }));
    ({ path: volume } = await boundClaim(w.cluster, w.app, 'data', '256Mi'));
    await writeFile(join(volume, 'base.bin'), randomBytes(8 * mib, 1));
    siteB = `${w.location}-b`;
    siteBSpec = {
      ...w.spec,
      s3: { ...w.spec.s3, prefix: `${w.spec.s3.prefix}-b` },
      repositoryPassword: { name: `${siteB}-password`, key: 'password' },
    };
    await w.cluster.kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: siteBSpec.repositoryPassword.name },
      stringData: { password: `secret of ${siteB}` },
    });
    await w.cluster.kube.create(`${api}/namespaces/${ferryNamespace}/backupstoragelocations`, {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name: siteB },
      spec: siteBSpec,
    });
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

function siteBRestic(): ResticEnv {
  return {
    repo: repositoryLocation(siteBSpec, w.app),
    password: repositoryPassword(`secret of ${siteB}`, w.app),
    env: {
      AWS_ACCESS_KEY_ID: w.cluster.s3.accessKey,
      AWS_SECRET_ACCESS_KEY: w.cluster.s3.secretKey,
      AWS_DEFAULT_REGION: w.cluster.s3.region,
    },
  };
}

async function copied(upload: string): Promise<Obj> {
  const name = `${upload}-b`;
  await w.cluster.kube.create(copies(w.app), {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataCopy',
    metadata: { name },
    spec: { dataUpload: upload, backupStorageLocation: siteB },
  });
  const { final } = await watchUntil(
    w.cluster,
    `${copies(w.app)}/${name}`,
    ['Completed', 'Failed', 'Canceled'],
    10 * 60_000,
  );
  assert.equal(final.status.phase, 'Completed', JSON.stringify(final.status));
  return final;
}

describe('a DataCopy on the cluster', { timeout: 30 * 60_000 }, () => {
  it('copies a backup into the second location, then only the changes, and forgets its copy when deleted', async (t) => {
    const first = await completedBackup(w, w.app, 'first');
    const one = await copied('first');
    assert.match(one.status.job, /^ferry-copy-[0-9a-f]{16}-a1$/);
    assert.equal(one.status.sourceSnapshotID, first.status.snapshotID);
    const snaps = await resticJSON<{ id: string }[]>(siteBRestic(), ['snapshots']);
    assert.deepEqual(
      snaps.map((s) => s.id),
      [one.status.snapshotID],
    );
    const du = await w.cluster.kube.get(`${uploads(w.app)}/first`);
    assert.equal(du.status.phase, 'Completed');
    assert.equal(du.status.copies?.[0]?.dataCopy, 'first-b');
    assert.equal(du.status.copies?.[0]?.phase, 'Completed');

    await writeFile(join(volume, 'new.bin'), randomBytes(1 * mib, 2));
    await completedBackup(w, w.app, 'second');
    const two = await copied('second');
    t.diagnostic(
      `bytes sent: first copy ${one.status.stats.bytesSent}, incremental copy ${two.status.stats.bytesSent}`,
    );
    assert.ok(one.status.stats.bytesSent > 8 * mib, `first ${one.status.stats.bytesSent}`);
    assert.ok(two.status.stats.bytesSent < 2 * mib, `incremental ${two.status.stats.bytesSent}`);

    await w.cluster.kube.delete(`${copies(w.app)}/first-b`);
    await w.cluster.kube.waitFor(
      `${copies(w.app)}?fieldSelector=metadata.name=first-b`,
      'the DataCopy to be gone',
      (list) => (list.items.length === 0 ? true : undefined),
      5 * 60_000,
    );
    const left = await resticJSON<{ id: string }[]>(siteBRestic(), ['snapshots']);
    assert.deepEqual(
      left.map((s) => s.id),
      [two.status.snapshotID],
    );
    const after = await w.cluster.kube.get(`${uploads(w.app)}/first`);
    assert.equal(after.status.phase, 'Completed');
    assert.deepEqual(after.status.copies ?? [], []);
  });
});
