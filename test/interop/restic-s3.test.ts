// ferry and restic read each other's repositories in S3 (a real MinIO), addressed by the same `s3:` location.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openBackend } from '../../src/engine/backend/open.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { backup } from '../../src/engine/operations/backup.ts';
import { restoreTree } from '../../src/engine/restore/restorer.ts';
import { listSnapshots } from '../../src/engine/repository/snapshots.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { startMinio } from '../support/minio.ts';
import { restic, resticJSON } from '../support/restic.ts';
import type { ResticEnv } from '../support/restic.ts';
import { ferryOK, parseJSON } from '../support/ferry-cli.ts';
import { testKDF, testPassword } from '../support/repo.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-interop-s3-'));
const source = join(work, 'source');
await makeFixtureTree(source, { smallFiles: 120 });
const minio = await startMinio();
const bucket = await minio.bucket('interop');
const credentials = { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey };
const awsEnv = { AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey };

test.after(async () => {
  await minio.destroy();
  await rm(work, { recursive: true, force: true });
});

const location = (prefix: string) => `s3:${minio.endpoint}/${bucket}/${prefix}`;
const resticAt = (prefix: string): ResticEnv => ({ repo: location(prefix), env: awsEnv });

function openS3(prefix: string) {
  return openBackend(location(prefix), { s3: { credentials } });
}

test('ferry writes to S3; restic check --read-data passes and restic restore reproduces the tree', async () => {
  const repo = await Repository.init(openS3('ferry-writes/nested'), testPassword, { kdf: testKDF });
  const r = await backup(repo, { paths: [source], tags: ['s3'] });
  await repo.close();
  assert.ok(r.stats.dataBlobs > 10);
  await restic(resticAt('ferry-writes/nested'), ['check', '--read-data']);
  const target = join(work, 'restic-restored');
  await restic(resticAt('ferry-writes/nested'), ['restore', r.snapshotID, '--target', target]);
  assert.deepEqual(await compareTrees(source, join(target, source), { sparse: false }), []);
  const snaps = await resticJSON<{ id: string; tags: string[] }[]>(resticAt('ferry-writes/nested'), ['snapshots']);
  assert.deepEqual(
    snaps.map((s) => [s.id, s.tags]),
    [[r.snapshotID, ['s3']]],
  );
});

test('restic writes to S3; ferry restores the same tree', async () => {
  await restic(resticAt('restic-writes'), ['init']);
  await restic(resticAt('restic-writes'), ['backup', source]);
  const repo = await Repository.open(openS3('restic-writes'), testPassword);
  await repo.loadIndex();
  const [snap] = await listSnapshots(repo);
  const target = join(work, 'ferry-restored');
  await restoreTree(repo, snap.snapshot.tree, { target });
  await repo.close();
  assert.deepEqual(await compareTrees(source, join(target, source)), []);
});

test('the ferry command line backs up into the restic repository in S3 adding no data blob, and both check it clean', async () => {
  // the repository of the previous test, now written by ferry as a separate process with AWS_* credentials
  const args = ['-r', location('restic-writes'), '--json'];
  const r = parseJSON<{ data_blobs: number; snapshot_id: string }>(
    await ferryOK(['repo', 'backup', ...args, source], { env: awsEnv }),
  );
  assert.equal(r.data_blobs, 0, 'every data blob was already stored by restic');
  const check = parseJSON<{ errors: string[]; packs_read: number }>(
    await ferryOK(['repo', 'check', ...args, '--read-data'], { env: awsEnv }),
  );
  assert.deepEqual(check.errors, []);
  assert.ok(check.packs_read > 0);
  await restic(resticAt('restic-writes'), ['check', '--read-data']);
  const snaps = await resticJSON<{ id: string }[]>(resticAt('restic-writes'), ['snapshots']);
  assert.equal(snaps.length, 2);
  assert.ok(snaps.some((s) => s.id === r.snapshot_id));
});
