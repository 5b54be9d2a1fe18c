// What the demo sets up on the cluster in a box, as a platform team and an application team would: a
// BackupStorageLocation on the box's MinIO (with its credentials and repository password Secrets) in ferry's
// namespace, an application namespace with a bound PVC, and a namespace to restore into. Every name carries the
// run's id, so demos never collide with each other or with the test suites sharing the box.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { S3Settings } from '../../test/cluster/box.ts';
import type { Kube, KubeObject } from '../../test/cluster/kube.ts';
import { statePaths } from '../../test/cluster/paths.ts';
import type { BackupStorageLocationSpec } from '../shared/api/types.ts';

export const ferryNamespace = 'ferry-system';
export const api = '/apis/ferry.dev/v1alpha1';
export const demoLabel = 'ferry.dev/demo';

export interface Scene {
  id: string;
  appNamespace: string;
  restoreNamespace: string;
  location: string;
  pvc: string;
  /** where the box's storage driver keeps the application volume on this machine */
  volumePath: string;
}

const claims = (ns: string): string => `/api/v1/namespaces/${ns}/persistentvolumeclaims`;

async function namespace(kube: Kube, name: string, id: string): Promise<void> {
  await kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [demoLabel]: id } } });
}

/** The host directory of a PV the box's storage driver provisioned. */
export async function volumeDirectory(kube: Kube, pv: string): Promise<string> {
  const obj = await kube.get(`/api/v1/persistentvolumes/${pv}`);
  return join(statePaths().storage, 'volumes', obj.spec.csi.volumeHandle);
}

export async function setUp(kube: Kube, s3: S3Settings): Promise<Scene> {
  const id = randomBytes(3).toString('hex');
  const scene = { id, appNamespace: `demo-app-${id}`, restoreNamespace: `demo-restore-${id}`, location: `demo-${id}`, pvc: 'data' };
  await namespace(kube, scene.appNamespace, id);
  await namespace(kube, scene.restoreNamespace, id);
  const secret = (name: string, data: Record<string, string>): KubeObject =>
    ({ apiVersion: 'v1', kind: 'Secret', metadata: { name, labels: { [demoLabel]: id } }, stringData: data });
  await kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, secret(`demo-s3-${id}`, { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey }));
  await kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, secret(`demo-password-${id}`, { password: randomBytes(24).toString('base64url') }));
  const spec: BackupStorageLocationSpec = {
    s3: { endpoint: s3.endpoint, bucket: s3.bucket, prefix: `demo/${id}`, region: s3.region },
    credential: { name: `demo-s3-${id}` },
    repositoryPassword: { name: `demo-password-${id}`, key: 'password' },
    allowedNamespaces: [scene.appNamespace, scene.restoreNamespace],
    crossNamespaceRestores: [{ from: scene.appNamespace, to: [scene.restoreNamespace] }],
  };
  await kube.create(`${api}/namespaces/${ferryNamespace}/backupstoragelocations`, {
    apiVersion: 'ferry.dev/v1alpha1', kind: 'BackupStorageLocation', metadata: { name: scene.location, labels: { [demoLabel]: id } }, spec,
  });
  await kube.create(claims(scene.appNamespace), {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: scene.pvc },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName: 'ferry-local-immediate', resources: { requests: { storage: '1Gi' } } },
  });
  const pvc = await kube.waitFor(`${claims(scene.appNamespace)}/${scene.pvc}`, `PVC ${scene.appNamespace}/${scene.pvc} to bind`, (c) => (c.status?.phase === 'Bound' ? c : undefined), 120_000);
  return { ...scene, volumePath: await volumeDirectory(kube, pvc.spec.volumeName) };
}

/** The restored PVC's host directory, once it is bound. */
export async function restoredVolume(kube: Kube, scene: Scene, pvc: string): Promise<string> {
  const claim = await kube.waitFor(`${claims(scene.restoreNamespace)}/${pvc}`, `PVC ${scene.restoreNamespace}/${pvc} to bind`, (c) => (c.status?.phase === 'Bound' ? c : undefined), 120_000);
  return volumeDirectory(kube, claim.spec.volumeName);
}

/** Removes what the demo made (the DataUpload's delete step frees its repository data as its namespace goes). */
export async function tearDown(kube: Kube, scene: Scene): Promise<void> {
  for (const ns of [scene.appNamespace, scene.restoreNamespace]) await kube.delete(`/api/v1/namespaces/${ns}`);
  // the location stays until the DataUpload's delete step has used it
  await kube.waitFor(`${api}/namespaces/${scene.appNamespace}/datauploads`, 'the demo DataUpload to be deleted', (l) => (l.items.length === 0 ? true : undefined), 5 * 60_000)
    .catch(() => undefined);
  await kube.delete(`${api}/namespaces/${ferryNamespace}/backupstoragelocations/${scene.location}`);
  for (const name of [`demo-s3-${scene.id}`, `demo-password-${scene.id}`]) await kube.delete(`/api/v1/namespaces/${ferryNamespace}/secrets/${name}`);
}
