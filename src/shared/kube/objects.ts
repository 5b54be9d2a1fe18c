// The parts of Kubernetes objects ferry reads and writes (PVCs, PVs, CSI snapshots), typed loosely: only the
// fields ferry touches, everything else passes through untouched.
import type { KubeObject } from './kube.ts';

export type VolumeMode = 'Filesystem' | 'Block';

export interface PersistentVolumeClaim extends KubeObject {
  kind: 'PersistentVolumeClaim';
  spec: {
    accessModes?: string[];
    storageClassName?: string;
    volumeMode?: VolumeMode;
    volumeName?: string;
    resources?: { requests?: { storage?: string } };
    dataSource?: { apiGroup?: string; kind: string; name: string };
    selector?: { matchLabels?: Record<string, string> };
  };
  status?: { phase?: 'Pending' | 'Bound' | 'Lost'; capacity?: { storage?: string } };
}

export interface PersistentVolume extends KubeObject {
  kind: 'PersistentVolume';
  spec: {
    capacity?: { storage?: string };
    accessModes?: string[];
    storageClassName?: string;
    volumeMode?: VolumeMode;
    persistentVolumeReclaimPolicy?: 'Delete' | 'Retain' | 'Recycle';
    claimRef?: {
      apiVersion?: string;
      kind?: string;
      namespace?: string;
      name?: string;
      uid?: string;
      resourceVersion?: string;
    };
  };
  status?: { phase?: 'Pending' | 'Available' | 'Bound' | 'Released' | 'Failed' };
}

export interface VolumeSnapshot extends KubeObject {
  kind: 'VolumeSnapshot';
  spec: {
    source: { persistentVolumeClaimName?: string; volumeSnapshotContentName?: string };
    volumeSnapshotClassName?: string;
  };
  status?: {
    boundVolumeSnapshotContentName?: string;
    readyToUse?: boolean;
    restoreSize?: string;
    error?: { message?: string; time?: string };
  };
}

export interface VolumeSnapshotContent extends KubeObject {
  kind: 'VolumeSnapshotContent';
  spec: {
    deletionPolicy: 'Delete' | 'Retain';
    driver: string;
    source: { snapshotHandle?: string; volumeHandle?: string };
    volumeSnapshotRef: { apiVersion?: string; kind?: string; namespace: string; name: string; uid?: string };
    volumeSnapshotClassName?: string;
    sourceVolumeMode?: VolumeMode;
  };
  status?: { snapshotHandle?: string; readyToUse?: boolean; restoreSize?: number; error?: { message?: string } };
}

export interface StorageClass extends KubeObject {
  kind: 'StorageClass';
  provisioner: string;
  volumeBindingMode?: 'Immediate' | 'WaitForFirstConsumer';
}

export function pvcRequest(pvc: PersistentVolumeClaim): string | undefined {
  return pvc.spec.resources?.requests?.storage;
}
