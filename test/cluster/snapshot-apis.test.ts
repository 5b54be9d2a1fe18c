// The CSI APIs beyond plain snapshots that the box's driver serves through the real sidecars: a VolumeGroupSnapshot
// of several claims cut at one instant (csi-snapshotter, the snapshot-controller), and a block snapshot's allocated
// and changed blocks read through the csi-snapshot-metadata sidecar by the API's own example client, as a backup
// application reads them (a ServiceAccount token for the service's audience, TLS with the CA the service names).

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { open } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { useCluster } from '../support/cluster.ts';
import type { TestCluster } from '../support/cluster.ts';
import { toolPath } from '../support/tools.ts';
import type { KubeObject } from './kube.ts';
import { claimObject, claimsPath, snapshotReady, snapshotsPath, volumeFile } from './testing.ts';

const run = promisify(execFile);
const groups = (ns: string): string => `/apis/groupsnapshot.storage.k8s.io/v1/namespaces/${ns}/volumegroupsnapshots`;

let cluster: TestCluster;
let ns: string;

before(async () => {
  cluster = await useCluster('snapshot-apis');
  ns = await cluster.namespace();
});
after(() => cluster.cleanup());

/** A bound claim on the immediate class and the file that holds its data on this machine. */
async function claim(name: string, block: boolean, labels: Record<string, string> = {}): Promise<string> {
  const obj = claimObject(name, {
    storageClassName: 'ferry-local-immediate',
    volumeMode: block ? 'Block' : 'Filesystem',
    resources: { requests: { storage: '8Mi' } },
  });
  obj.metadata.labels = labels;
  await cluster.kube.create(claimsPath(ns), obj);
  const bound = await cluster.kube.waitFor(`${claimsPath(ns)}/${name}`, `claim ${name} to bind`, (c) =>
    c.status?.phase === 'Bound' ? c : undefined,
  );
  return volumeFile(await cluster.kube.get(`/api/v1/persistentvolumes/${bound.spec.volumeName}`));
}

async function writeAt(image: string, offset: number, bytes: number, fill: number): Promise<void> {
  const f = await open(image, 'r+');
  try {
    await f.write(Buffer.alloc(bytes, fill), 0, bytes, offset);
  } finally {
    await f.close();
  }
}

async function snapshot(name: string, claimName: string): Promise<KubeObject> {
  await cluster.kube.create(snapshotsPath(ns), {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name },
    spec: { source: { persistentVolumeClaimName: claimName } },
  });
  return snapshotReady(cluster.kube, ns, name);
}

interface Extent {
  byte_offset: number;
  size_bytes: number;
}

/** `snapshot-metadata-lister -o json` as the ServiceAccount `reader`: the extents it printed, in order. */
async function listBlocks(args: string[]): Promise<Extent[]> {
  const lister = await toolPath('snapshot-metadata-lister');
  const common = ['--kubeconfig', cluster.kubeconfig, '-n', ns, '--service-account', 'reader'];
  const { stdout } = await run(lister, [...common, '--service-account-namespace', ns, '-o', 'json', ...args]);
  // one record per streamed response; protobuf's JSON leaves out a zero offset
  const records = JSON.parse(stdout) as { block_metadata?: Partial<Extent>[] }[];
  const extents = records.flatMap((r) =>
    (r.block_metadata ?? []).map((e) => ({ byte_offset: e.byte_offset ?? 0, size_bytes: e.size_bytes ?? 0 })),
  );
  return extents;
}

describe('snapshot APIs of the CSI driver', () => {
  it('cuts a VolumeGroupSnapshot of two claims, each member a ready VolumeSnapshot of its claim', async () => {
    await claim('data', false, { app: 'db' });
    await claim('wal', false, { app: 'db' });
    await cluster.kube.create(groups(ns), {
      apiVersion: 'groupsnapshot.storage.k8s.io/v1',
      kind: 'VolumeGroupSnapshot',
      metadata: { name: 'db' },
      spec: { source: { selector: { matchLabels: { app: 'db' } } } },
    });
    const group = await cluster.kube.waitFor(
      `${groups(ns)}/db`,
      'the group snapshot to be ready',
      (g) => (g.status?.readyToUse ? g : undefined),
      120_000,
    );
    // the snapshot-controller makes the member VolumeSnapshots as the group's content reports them
    const isMember = (s: KubeObject): boolean =>
      (s.metadata.ownerReferences ?? []).some((o: KubeObject) => o.kind === 'VolumeGroupSnapshot');
    const members: KubeObject[] = await cluster.kube.waitFor(
      snapshotsPath(ns),
      'both member snapshots to be ready',
      (list) => {
        const found = list.items.filter(isMember);
        return found.length === 2 && found.every((s: KubeObject) => s.status?.readyToUse) ? found : undefined;
      },
      120_000,
    );
    assert.deepEqual(
      members.map((s) => s.spec.source.persistentVolumeClaimName).sort(),
      ['data', 'wal'],
      JSON.stringify(group.status),
    );
  });

  it("lists a block snapshot's allocated blocks and the blocks changed since an earlier one", async () => {
    const image = await claim('disk', true);
    await writeAt(image, 0, 64 * 1024, 1);
    await writeAt(image, 4 * 1024 * 1024, 4096, 2);
    await snapshot('before', 'disk');
    await writeAt(image, 1024 * 1024, 4096, 3);
    await snapshot('after', 'disk');
    // the reader may get VolumeSnapshots in this namespace: what the sidecar checks of a token's owner
    await cluster.kube.create(`/api/v1/namespaces/${ns}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'reader' },
    });
    const denied = await listBlocks(['-s', 'before']).then(
      () => 'listed',
      (err: Error & { stderr?: string }) => err.stderr ?? err.message,
    );
    assert.match(denied, /PermissionDenied|Unauthenticated|not authorized|forbidden/i);
    await cluster.kube.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'reader' },
      rules: [{ apiGroups: ['snapshot.storage.k8s.io'], resources: ['volumesnapshots'], verbs: ['get'] }],
    });
    await cluster.kube.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'reader' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'reader', namespace: ns }],
    });
    const allocated = await listBlocks(['-s', 'before']);
    const covered = (list: Extent[], offset: number): boolean =>
      list.some((e) => e.byte_offset <= offset && offset < e.byte_offset + e.size_bytes);
    assert.ok(covered(allocated, 0) && covered(allocated, 4 * 1024 * 1024), JSON.stringify(allocated));
    assert.ok(!covered(allocated, 2 * 1024 * 1024), `a hole is not allocated: ${JSON.stringify(allocated)}`);
    const changed = await listBlocks(['-s', 'after', '-p', 'before']);
    assert.deepEqual(changed, [{ byte_offset: 1024 * 1024, size_bytes: 4096 }]);
  });
});
