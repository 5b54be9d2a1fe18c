// What the demo sets up on the cluster in a box, as a platform team and an application team would: a
// BackupStorageLocation on the box's MinIO (with its credentials and repository password Secrets) in ferry's
// namespace, an application namespace with a bound PVC, and a namespace to restore into. Every name carries the
// run's id, so demos never collide with each other or with the test suites sharing the box.
import { randomBytes } from 'node:crypto';
import type { S3Settings } from '../box.ts';
import { until, volumeFile } from '../testing.ts';
import { apiVersion, type BackupStorageLocationSpec } from '../../../src/shared/api/types.ts';
import type { Kube, KubeObject } from '../../../src/shared/kube/kube.ts';

export const ferryNamespace = 'ferry-system';
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

type Claim = KubeObject & { spec: { volumeName?: string }; status?: { phase?: string } };

async function namespace(kube: Kube, name: string, id: string): Promise<void> {
  await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [demoLabel]: id } } });
}

/** The host directory of a bound PVC's volume, which the box's CSI driver keeps on this machine. */
async function boundVolume(kube: Kube, namespace: string, name: string): Promise<string> {
  const claim = await until(`PVC ${namespace}/${name} to bind`, 120_000, async () => {
    const c = await kube.get<Claim>({ kind: 'PersistentVolumeClaim', namespace, name });
    return c?.status?.phase === 'Bound' ? c : undefined;
  });
  return volumeFile((await kube.get<KubeObject>({ kind: 'PersistentVolume', name: claim.spec.volumeName! }))!);
}

export async function setUp(kube: Kube, s3: S3Settings): Promise<Scene> {
  const id = randomBytes(3).toString('hex');
  const scene = {
    id,
    appNamespace: `demo-app-${id}`,
    restoreNamespace: `demo-restore-${id}`,
    location: `demo-${id}`,
    pvc: 'data',
  };
  await namespace(kube, scene.appNamespace, id);
  await namespace(kube, scene.restoreNamespace, id);
  const secret = (name: string, data: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ferryNamespace, labels: { [demoLabel]: id } },
    stringData: data,
  });
  await kube.create(secret(`demo-s3-${id}`, { AWS_ACCESS_KEY_ID: s3.accessKey, AWS_SECRET_ACCESS_KEY: s3.secretKey }));
  await kube.create(secret(`demo-password-${id}`, { password: randomBytes(24).toString('base64url') }));
  const spec: BackupStorageLocationSpec = {
    s3: { endpoint: s3.endpoint, bucket: s3.bucket, prefix: `demo/${id}`, region: s3.region },
    credential: { name: `demo-s3-${id}` },
    repositoryPassword: { name: `demo-password-${id}`, key: 'password' },
    allowedNamespaces: [scene.appNamespace, scene.restoreNamespace],
    crossNamespaceRestores: [{ from: scene.appNamespace, to: [scene.restoreNamespace] }],
  };
  await kube.create({
    apiVersion,
    kind: 'BackupStorageLocation',
    metadata: { name: scene.location, namespace: ferryNamespace, labels: { [demoLabel]: id } },
    spec,
  });
  await kube.create({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: scene.pvc, namespace: scene.appNamespace },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'ferry-local-immediate',
      resources: { requests: { storage: '1Gi' } },
    },
  });
  return { ...scene, volumePath: await boundVolume(kube, scene.appNamespace, scene.pvc) };
}

/** The restored PVC's host directory, once it is bound. */
export function restoredVolume(kube: Kube, scene: Scene, pvc: string): Promise<string> {
  return boundVolume(kube, scene.restoreNamespace, pvc);
}

/** Removes what the demo made (the DataUpload's delete step frees its repository data as its namespace goes). */
export async function tearDown(kube: Kube, scene: Scene): Promise<void> {
  for (const name of [scene.appNamespace, scene.restoreNamespace]) await kube.delete({ kind: 'Namespace', name });
  // the location stays until the DataUpload's delete step has used it
  await until('the demo DataUpload to be deleted', 5 * 60_000, async () =>
    (await kube.list('DataUpload', { namespace: scene.appNamespace })).length === 0 ? true : undefined,
  ).catch(() => undefined);
  await kube.delete({ kind: 'BackupStorageLocation', namespace: ferryNamespace, name: scene.location });
  for (const name of [`demo-s3-${scene.id}`, `demo-password-${scene.id}`])
    await kube.delete({ kind: 'Secret', namespace: ferryNamespace, name });
}
