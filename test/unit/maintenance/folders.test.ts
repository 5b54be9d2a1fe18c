// listFolders: the folders directly under a location, on a filesystem and on S3 (MinIO, listed with delimiter "/"),
// which is how maintenance finds every repository a storage location holds.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { listFolders } from '../../../src/engine/backend/folders.ts';
import { startMinio } from '../../support/minio.ts';

const scratch = await mkdtemp(join(tmpdir(), 'ferry-folders-'));
const minio = await startMinio();
after(async () => {
  await rm(scratch, { recursive: true, force: true });
  await minio.destroy();
});

test('filesystem: the sub-directories, not the files; a missing location has none', async () => {
  await mkdir(join(scratch, 'repos/app/data/00'), { recursive: true });
  await mkdir(join(scratch, 'repos/gone'));
  await writeFile(join(scratch, 'repos/README'), 'not a repository');
  assert.deepEqual(await listFolders(join(scratch, 'repos')), ['app', 'gone']);
  assert.deepEqual(await listFolders(`local:${join(scratch, 'repos')}`), ['app', 'gone']);
  assert.deepEqual(await listFolders(join(scratch, 'nowhere')), []);
});

test('S3: the common prefixes one level under the prefix, nothing from beside it; a missing bucket is named', async () => {
  const bucket = await minio.bucket('ferry-folders');
  const credentials = { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey };
  const raw = new S3Client({ endpoint: minio.endpoint, region: 'us-east-1', forcePathStyle: true, credentials });
  const keys = [
    'loc/app/config',
    'loc/app/data/00/0011',
    'loc/gone/keys/ab',
    'loc/file-at-root',
    'other/app/config',
    'loc2/x/config',
  ];
  for (let i = 0; i < 5; i++) keys.push(`loc/ns-${i}/config`);
  for (const Key of keys) await raw.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'x' }));
  raw.destroy();
  const opts = { s3: { credentials, region: 'us-east-1' } };
  assert.deepEqual(await listFolders(`s3:${minio.endpoint}/${bucket}/loc`, opts), [
    'app',
    'gone',
    'ns-0',
    'ns-1',
    'ns-2',
    'ns-3',
    'ns-4',
  ]);
  assert.deepEqual(await listFolders(`s3:${minio.endpoint}/${bucket}`, opts), ['loc', 'loc2', 'other']);
  assert.deepEqual(await listFolders(`s3:${minio.endpoint}/${bucket}/empty`, opts), []);
  await assert.rejects(listFolders(`s3:${minio.endpoint}/no-such-bucket-here/loc`, opts), /no-such-bucket-here/);
});
