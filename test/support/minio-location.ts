// A BackupStorageLocation on a real MinIO bucket, with its two Secrets, and a step harness whose engine opens real
// S3 backends: what a step in a cluster sees, without the cluster.
import type { BackupStorageLocationSpec } from '../../src/shared/api/types.ts';
import type { KubeObject } from '../../src/shared/kube/kube.ts';
import { openBackend } from '../../src/engine/operations/storage.ts';
import type { Harness } from '../unit/steps/harness.ts';
import { ferryNamespace } from '../unit/steps/harness.ts';
import type { Minio } from './minio.ts';

export const locationSecret = 'location secret';

export function minioLocation(
  minio: Minio,
  name: string,
  bucket: string,
  over: Partial<BackupStorageLocationSpec> = {},
): KubeObject[] {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return [
    {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name, namespace: ferryNamespace },
      spec: {
        s3: { endpoint: minio.endpoint, bucket, prefix: 'site' },
        credential: { name: `${name}-s3` },
        repositoryPassword: { name: `${name}-repo`, key: 'password' },
        allowedNamespaces: ['*'],
        ...over,
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-s3`, namespace: ferryNamespace },
      data: { AWS_ACCESS_KEY_ID: b64(minio.accessKey), AWS_SECRET_ACCESS_KEY: b64(minio.secretKey) },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-repo`, namespace: ferryNamespace },
      data: { password: b64(locationSecret) },
    },
  ];
}

/** The harness's steps open real backends (MinIO) instead of in-memory ones. */
export function onRealStorage(h: Harness): Harness {
  h.ctx.engine = { ...h.ctx.engine, openBackend };
  return h;
}
