// The S3 endpoint dies mid-backup (SIGKILL, as a crashed or rescheduled MinIO pod) and comes back a few seconds
// later. The backup either rides it out through the retry backend or fails with a clear message; a rerun then
// completes, and ferry and restic both find the repository clean with exactly one snapshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Backend } from '../../src/engine/backend/s3.ts';
import { openBackend } from '../../src/engine/backend/open.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { ferryOK, hasStackTrace, parseJSON, spawnFerry } from '../support/ferry-cli.ts';
import { startMinio } from '../support/minio.ts';
import { randomBytes, testKDF, testPassword } from '../support/repo.ts';
import { restic, resticJSON } from '../support/restic.ts';

const MiB = 1024 * 1024;
const outageMs = 4000;

const work = await mkdtemp(join(tmpdir(), 'ferry-faults-minio-'));
const source = join(work, 'source');
await mkdir(source);
for (let i = 0; i < 6; i++) await writeFile(join(source, `big-${i}.bin`), randomBytes(3 * MiB, 300 + i));
await writeFile(join(source, 'notes.txt'), 'the endpoint went away\n'.repeat(5000));

const minio = await startMinio();
const bucket = await minio.bucket('outage');
const credentials = { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey };
const awsEnv = { AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey };
const location = `s3:${minio.endpoint}/${bucket}/repo`;

test.after(async () => {
  await minio.destroy();
  await rm(work, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function countPacks(s3: S3Backend): Promise<number> {
  let n = 0;
  try {
    for await (const _ of s3.list('pack')) n++;
  } catch {
    // the server is down or starting: no count this time
  }
  return n;
}

interface Summary {
  snapshot_id: string;
  packs_adopted: number;
}

test('MinIO killed mid-backup and restarted: the backup completes, or fails clearly and a rerun completes', async (t) => {
  const repo = await Repository.init(openBackend(location, { s3: { credentials } }), testPassword, { kdf: testKDF });
  await repo.close();
  const args = ['repo', 'backup', '-r', location, '--json', '--pack-size', '1', source];
  const { done } = spawnFerry(args, { env: awsEnv });
  let finished = false;
  void done.then(() => {
    finished = true;
  });

  const probe = new S3Backend({ endpoint: minio.endpoint, bucket, prefix: 'repo', credentials });
  while (!finished && (await countPacks(probe)) < 3) await sleep(50);
  assert.ok(!finished, 'the backup finished before the outage could start');
  await minio.stop('SIGKILL');
  await sleep(outageMs);
  await minio.restart();
  await probe.close();

  const first = await done;
  assert.ok(!hasStackTrace(first.stderr), `a stack trace instead of a message:\n${first.stderr}`);
  let snapshotID: string;
  t.diagnostic(first.code === 0 ? 'the backup rode out the outage' : `the backup failed: ${first.stderr.trim()}`);
  if (first.code === 0) {
    snapshotID = parseJSON<Summary>(first).snapshot_id;
  } else {
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /127\.0\.0\.1|S3|connect|reach/i, 'the failure names what could not be reached');
    const second = parseJSON<Summary>(await ferryOK(args, { env: awsEnv }));
    snapshotID = second.snapshot_id;
    // the dead run's lock stays until unlock removes it, as with restic
    await ferryOK(['repo', 'unlock', '-r', location], { env: awsEnv });
  }

  const check = parseJSON<{ errors: string[] }>(
    await ferryOK(['repo', 'check', '-r', location, '--read-data', '--json'], { env: awsEnv }),
  );
  assert.deepEqual(check.errors, []);
  const resticEnv = { repo: location, env: awsEnv };
  await restic(resticEnv, ['check', '--read-data']);
  const snaps = await resticJSON<{ id: string }[]>(resticEnv, ['snapshots']);
  assert.deepEqual(
    snaps.map((s) => s.id),
    [snapshotID],
  );
  const target = join(work, 'restored');
  await restic(resticEnv, ['restore', snapshotID, '--target', target]);
  assert.deepEqual(await compareTrees(source, join(target, source), { sparse: false }), []);
});
