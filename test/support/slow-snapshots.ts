// A VolumeSnapshotClass of the box's CSI driver whose snapshots become ready only after `readyDelay`: it keeps a
// DataUpload in its first phase, its snapshot Job running, while a test acts on it.
import type { Kube } from '../cluster/kube.ts';

const classes = '/apis/snapshot.storage.k8s.io/v1/volumesnapshotclasses';

export async function createSlowSnapshotClass(kube: Kube, name: string, readyDelay = '30m'): Promise<void> {
  await kube.create(classes, {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotClass',
    metadata: { name },
    driver: 'local.csi.ferry.dev',
    deletionPolicy: 'Delete',
    parameters: { readyDelay },
  });
}

export async function deleteSlowSnapshotClass(kube: Kube, name: string): Promise<void> {
  await kube.delete(`${classes}/${name}`);
}
