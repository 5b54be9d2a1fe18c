// The box's storage behaves as a CSI driver with snapshots: dynamic and immediate provisioning, VolumeSnapshots
// through the real snapshot-controller, restores and clones, pre-provisioned contents across namespaces, block
// volumes, and reclaim.

import assert from 'node:assert/strict';
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { useCluster } from '../support/cluster.ts';
import type { TestCluster } from '../support/cluster.ts';
import type { KubeObject } from './kube.ts';
import { statePaths } from './paths.ts';
import {
  claimObject,
  claimsPath,
  contentsPath,
  podFinished,
  podObject,
  podsPath,
  shellContainer,
  snapshotReady,
  snapshotsPath,
} from './testing.ts';

let cluster: TestCluster;
let ns: string;

before(async () => {
  cluster = await useCluster('storage');
  ns = await cluster.namespace();
});
after(() => cluster.cleanup());

/** Runs a pod with the claim at /data (or as /dev/xvda for block) and returns its log. */
async function runWith(namespace: string, name: string, claim: string, script: string, block = false): Promise<string> {
  const attach = block
    ? { volumeDevices: [{ name: 'data', devicePath: '/dev/xvda' }] }
    : { volumeMounts: [{ name: 'data', mountPath: '/data' }] };
  await cluster.kube.create(
    podsPath(namespace),
    podObject(name, {
      containers: [shellContainer('main', script, attach)],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: claim } }],
    }),
  );
  const pod = await podFinished(cluster.kube, namespace, name);
  const logs = await cluster.podLogs(namespace, name);
  assert.equal(pod.status.phase, 'Succeeded', `pod ${name} failed: ${logs}`);
  return logs;
}

function snapshotObject(name: string, source: KubeObject, className?: string): KubeObject {
  return {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name },
    spec: { source, ...(className ? { volumeSnapshotClassName: className } : {}) },
  };
}

const fromSnapshot = (name: string): KubeObject => ({
  dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name },
});

describe('volume snapshots', () => {
  it('snapshots a PVC, restores it into a new PVC, and a later change does not leak into the snapshot', async () => {
    const { kube } = cluster;
    await kube.create(claimsPath(ns), claimObject('origin'));
    await runWith(ns, 'fill', 'origin', 'mkdir /data/dir && echo v1 > /data/dir/file && ln -s dir/file /data/link');
    await kube.create(snapshotsPath(ns), snapshotObject('snap', { persistentVolumeClaimName: 'origin' }));
    const vs = await snapshotReady(kube, ns, 'snap');
    assert.equal(vs.status.restoreSize, '64Mi');
    await runWith(ns, 'change', 'origin', 'echo v2 > /data/dir/file');
    await kube.create(claimsPath(ns), claimObject('restored', fromSnapshot('snap')));
    const logs = await runWith(ns, 'read', 'restored', 'cat /data/dir/file; readlink /data/link');
    assert.equal(logs, 'v1\ndir/file\n');
  });

  it('keeps a new snapshot not ready for the class readyDelay', async () => {
    const { kube } = cluster;
    await kube.create('/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses', {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: `${ns}-slow` },
      driver: 'local.csi.ferry.dev',
      deletionPolicy: 'Delete',
      parameters: { readyDelay: '3s' },
    });
    await kube.create(claimsPath(ns), claimObject('slow', { storageClassName: 'ferry-local-immediate' }));
    await kube.waitFor(`${claimsPath(ns)}/slow`, 'the immediate claim to bind', (c) =>
      c.status?.phase === 'Bound' ? true : undefined,
    );
    await kube.create(
      snapshotsPath(ns),
      snapshotObject('slow-snap', { persistentVolumeClaimName: 'slow' }, `${ns}-slow`),
    );
    const content = await kube.waitFor(
      `${snapshotsPath(ns)}/slow-snap`,
      'a bound content',
      (vs) => vs.status?.boundVolumeSnapshotContentName,
    );
    const notYet = await kube.waitFor(`${contentsPath}/${content}`, 'the snapshot to be taken', (c) =>
      c.status?.snapshotHandle ? c : undefined,
    );
    assert.equal(notYet.status.readyToUse, false);
    const t0 = Date.now();
    await snapshotReady(kube, ns, 'slow-snap');
    assert.ok(Date.now() - t0 > 1000, 'readyToUse came after the delay');
    await kube.delete(`/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses/${ns}-slow`);
  });

  it('binds a pre-provisioned VolumeSnapshotContent by snapshotHandle in another namespace and restores from it', async () => {
    const { kube } = cluster;
    await kube.create(claimsPath(ns), claimObject('source'));
    await runWith(ns, 'fill-source', 'source', 'echo cross-namespace > /data/note');
    await kube.create(snapshotsPath(ns), snapshotObject('original', { persistentVolumeClaimName: 'source' }));
    const vs = await snapshotReady(kube, ns, 'original');
    const content = await kube.get(`${contentsPath}/${vs.status.boundVolumeSnapshotContentName}`);
    const other = await cluster.namespace('other');
    const staticName = `${other}-clone`;
    await kube.create(contentsPath, {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotContent',
      metadata: { name: staticName },
      spec: {
        driver: 'local.csi.ferry.dev',
        deletionPolicy: 'Retain',
        volumeSnapshotClassName: 'ferry-local',
        source: { snapshotHandle: content.status.snapshotHandle },
        volumeSnapshotRef: { name: 'clone', namespace: other },
      },
    });
    await kube.create(snapshotsPath(other), snapshotObject('clone', { volumeSnapshotContentName: staticName }));
    const clone = await snapshotReady(kube, other, 'clone');
    assert.equal(clone.status.boundVolumeSnapshotContentName, staticName);
    await kube.create(claimsPath(other), claimObject('restored', fromSnapshot('clone')));
    assert.equal(await runWith(other, 'read', 'restored', 'cat /data/note'), 'cross-namespace\n');
    // deletionPolicy Retain: the snapshot outlives the namespace's VolumeSnapshot and its content object
    await kube.delete(`${snapshotsPath(other)}/clone`);
    await kube.waitFor(`${snapshotsPath(other)}`, 'the clone VolumeSnapshot to go', (list) =>
      list.items.length === 0 ? true : undefined,
    );
    await kube.delete(`${contentsPath}/${staticName}`);
    await kube.waitFor(contentsPath, 'the static content to go', (list) =>
      list.items.some((c: any) => c.metadata.name === staticName) ? undefined : true,
    );
    await access(join(statePaths().storage, 'snapshots', content.status.snapshotHandle, 'data', 'note'));
  });

  it('round-trips a block volume through a snapshot', async () => {
    const { kube } = cluster;
    await kube.create(claimsPath(ns), claimObject('disk', { volumeMode: 'Block' }));
    const write =
      'test -b /dev/xvda && dd if=/dev/urandom of=/dev/xvda bs=1M count=8 conv=fsync 2>/dev/null && head -c 8388608 /dev/xvda | sha256sum';
    const written = await runWith(ns, 'write-disk', 'disk', write, true);
    await kube.create(snapshotsPath(ns), snapshotObject('disk-snap', { persistentVolumeClaimName: 'disk' }));
    await snapshotReady(kube, ns, 'disk-snap');
    await kube.create(claimsPath(ns), claimObject('disk-copy', { volumeMode: 'Block', ...fromSnapshot('disk-snap') }));
    const read = await runWith(
      ns,
      'read-disk',
      'disk-copy',
      'test -b /dev/xvda && head -c 8388608 /dev/xvda | sha256sum',
      true,
    );
    assert.match(written, /^[0-9a-f]{64} {2}-\n$/);
    assert.equal(read, written);
    const size = await runWith(ns, 'size-disk', 'disk-copy', 'blockdev --getsize64 /dev/xvda', true);
    assert.equal(size, `${64 * 1024 * 1024}\n`);
  });
});

describe('provisioning', () => {
  it('clones a PVC from a PVC dataSource', async () => {
    const { kube } = cluster;
    await kube.create(claimsPath(ns), claimObject('clone-source'));
    await runWith(ns, 'fill-clone-source', 'clone-source', 'echo original > /data/f');
    await kube.create(
      claimsPath(ns),
      claimObject('clone', { dataSource: { kind: 'PersistentVolumeClaim', name: 'clone-source' } }),
    );
    assert.equal(await runWith(ns, 'read-clone', 'clone', 'cat /data/f'), 'original\n');
  });

  it('deletes the volume and its data when the claim goes (reclaimPolicy Delete)', async () => {
    const { kube } = cluster;
    await kube.create(claimsPath(ns), claimObject('temp', { storageClassName: 'ferry-local-immediate' }));
    const claim = await kube.waitFor(`${claimsPath(ns)}/temp`, 'the claim to bind', (c) =>
      c.status?.phase === 'Bound' ? c : undefined,
    );
    const pvName: string = claim.spec.volumeName;
    const dataDir = join(statePaths().storage, 'volumes', pvName);
    await access(dataDir);
    await kube.delete(`${claimsPath(ns)}/temp`);
    await kube.waitFor('/api/v1/persistentvolumes', `PV ${pvName} to be deleted`, (list) =>
      list.items.some((pv: any) => pv.metadata.name === pvName) ? undefined : true,
    );
    await assert.rejects(access(dataDir), /ENOENT/);
  });
});
