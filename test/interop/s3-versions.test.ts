// The signed S3 requests the recovery mode stands on, against a real MinIO: a listing of object versions pages past
// a thousand entries and gives every key back as stored (S3 encodes a space as '+'), overwritten keys with each of
// their versions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { SignedS3, type VersionListing } from '../../src/engine/backend/s3-signed.ts';
import { startMinio } from '../support/minio.ts';

const minio = await startMinio();
test.after(() => minio.destroy());

test('versions are listed page after page, keys as stored, every version of an overwritten key', async () => {
  const bucket = await minio.bucket('versions', { objectLock: true });
  const keys = Array.from({ length: 1010 }, (_, i) => `p/k ${String(i).padStart(4, '0')}+&`);
  for (let i = 0; i < keys.length; i += 50) {
    await Promise.all(
      keys.slice(i, i + 50).map((k) => minio.client.send(new PutObjectCommand({ Bucket: bucket, Key: k, Body: 'x' }))),
    );
  }
  await minio.client.send(new PutObjectCommand({ Bucket: bucket, Key: keys[999], Body: 'y' }));
  const s3 = new SignedS3({
    endpoint: minio.endpoint,
    region: 'us-east-1',
    bucket,
    pathStyle: true,
    credentials: { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey },
    maxSockets: 8,
    connectTimeoutMs: 5000,
    idleTimeoutMs: 10_000,
  });
  const versions = new Map<string, number>();
  let pages = 0;
  let next: VersionListing['next'];
  do {
    const page = await s3.listVersions('p/', next);
    pages++;
    for (const v of page.versions) versions.set(v.key, (versions.get(v.key) ?? 0) + 1);
    next = page.next;
  } while (next);
  s3.close();
  assert.ok(pages >= 2, `${pages} pages`);
  assert.deepEqual([...versions.keys()].sort(), keys);
  assert.equal(versions.get(keys[999]), 2);
});
