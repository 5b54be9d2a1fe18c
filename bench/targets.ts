// The two storage targets: a repository folder on the local disk, and a fresh bucket per repository on one MinIO
// server on 127.0.0.1 (test/support/minio.ts). Both report the bytes stored; MinIO also counts the S3 requests.
import { DeleteObjectsCommand, DeleteBucketCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startMinio } from '../test/support/minio.ts';
import type { Minio } from '../test/support/minio.ts';
import { bucketRequestCounts } from './measure/minio-metrics.ts';
import type { RequestCounts } from './measure/minio-metrics.ts';
import { treeBytes } from './measure/stored.ts';
import type { Place } from './peers/peer.ts';

export type TargetName = 'local' | 'minio';

export interface Target {
  name: TargetName;
  /** a new, empty repository place; `label` names it (letters, digits, dashes) */
  fresh(label: string): Promise<Place>;
  storedBytes(place: Place): Promise<number>;
  /** S3 requests the place has served so far (MinIO only) */
  requests(place: Place): Promise<RequestCounts | undefined>;
  discard(place: Place): Promise<void>;
  close(): Promise<void>;
}

export function localTarget(root: string): Target {
  return {
    name: 'local',
    async fresh(label) {
      const dir = join(root, `repo-${label}`);
      await rm(dir, { recursive: true, force: true });
      await mkdir(root, { recursive: true });
      return { kind: 'local', dir };
    },
    storedBytes: (place) => treeBytes(localDir(place)),
    requests: async () => undefined,
    discard: (place) => rm(localDir(place), { recursive: true, force: true }),
    close: async () => {},
  };
}

function localDir(place: Place): string {
  if (place.kind !== 'local') throw new Error('The local target was given an S3 place.');
  return place.dir;
}

function s3Place(place: Place): Extract<Place, { kind: 's3' }> {
  if (place.kind !== 's3') throw new Error('The MinIO target was given a local place.');
  return place;
}

async function* listObjects(client: S3Client, bucket: string): AsyncGenerator<{ key: string; size: number }> {
  let token: string | undefined;
  do {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const o of page.Contents ?? []) yield { key: o.Key!, size: o.Size ?? 0 };
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
}

async function emptyAndDelete(client: S3Client, bucket: string): Promise<void> {
  let keys: string[] = [];
  const flush = async (): Promise<void> => {
    if (keys.length === 0) return;
    await client.send(
      new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys.map((Key) => ({ Key })), Quiet: true } }),
    );
    keys = [];
  };
  for await (const o of listObjects(client, bucket)) {
    keys.push(o.key);
    if (keys.length === 1000) await flush();
  }
  await flush();
  await client.send(new DeleteBucketCommand({ Bucket: bucket }));
}

/** Starts MinIO with its data under `root` (not the system temporary folder: datasets are large). */
export async function minioTarget(root: string): Promise<Target> {
  await mkdir(root, { recursive: true });
  const savedTmp = process.env.TMPDIR;
  process.env.TMPDIR = root;
  let minio: Minio;
  try {
    minio = await startMinio();
  } finally {
    if (savedTmp === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmp;
  }
  const client = new S3Client({
    endpoint: minio.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey },
  });
  return {
    name: 'minio',
    async fresh(label) {
      const bucket = await minio.bucket(`bench-${label}`.toLowerCase().slice(0, 63));
      return { kind: 's3', endpoint: minio.endpoint, bucket, accessKey: minio.accessKey, secretKey: minio.secretKey };
    },
    async storedBytes(place) {
      let total = 0;
      for await (const o of listObjects(client, s3Place(place).bucket)) total += o.size;
      return total;
    },
    requests: (place) => bucketRequestCounts(minio, s3Place(place).bucket),
    discard: (place) => emptyAndDelete(client, s3Place(place).bucket),
    async close() {
      client.destroy();
      await minio.destroy();
    },
  };
}
