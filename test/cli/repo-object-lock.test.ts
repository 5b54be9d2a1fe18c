// `ferry repo` on an immutable location (a real MinIO bucket created with S3 Object Lock), as a user runs it: bad
// --object-lock values and misplaced flags are refused with exit 2 naming the flag, a bucket without Object Lock is
// refused naming the setting, retain extends retention, forget says what it kept and until when, and after an
// attacker with the bucket's credentials deleted every object, --recover-versions lists and restores the snapshot,
// and copy --from-recover-versions brings it into a new repository.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareTrees } from '../support/compare-tree.ts';
import { ferry, ferryOK, hasStackTrace, parseJSON } from '../support/ferry-cli.ts';
import { startMinio } from '../support/minio.ts';
import { randomBytes } from '../support/repo.ts';
import { restic } from '../support/restic.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-cli-object-lock-'));
const minio = await startMinio();
const s3 = minio.client;
test.after(async () => {
  await minio.destroy();
  await rm(work, { recursive: true, force: true });
});
const locked = await minio.bucket('locked', { objectLock: true });
const plain = await minio.bucket('plain');
const env = { AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey, FERRY_PASSWORD: 'pw' };
const data = join(work, 'data');
await mkdir(join(data, 'sub'), { recursive: true });
await writeFile(join(data, 'a.bin'), randomBytes(2_000_000, 5));
await writeFile(join(data, 'sub', 'b.txt'), 'kept whatever happens\n'.repeat(3000));
const sourcePassword = join(work, 'pw');
await writeFile(sourcePassword, 'pw\n');
const repo = `s3:${minio.endpoint}/${locked}/app`;
const lockFlag = ['--object-lock', 'governance:10m'];

const run = (args: string[]) => ferry(['repo', ...args], { password: null, env });
const ok = (args: string[]) => ferryOK(['repo', ...args], { password: null, env });

async function refused(args: string[], code: number): Promise<string> {
  const r = await run(args);
  assert.equal(r.code, code, `exit code of ferry repo ${args.join(' ')}:\n${r.stderr}${r.stdout}`);
  assert.ok(!hasStackTrace(r.stderr), r.stderr);
  return r.stderr;
}

test('bad --object-lock values and misplaced recovery flags are refused naming the flag', async () => {
  for (const bad of ['legal:30d', 'governance', 'compliance:0s', 'governance:30 days', 'governance:40000d']) {
    assert.match(
      await refused(['init', '-r', repo, '--object-lock', bad], 2),
      new RegExp(`--object-lock "${bad}" must be MODE:PERIOD, MODE governance or compliance`),
    );
  }
  assert.match(
    await refused(['init', '-r', join(work, 'dir-repo'), ...lockFlag], 2),
    /--object-lock needs an s3: repository/,
  );
  assert.match(
    await refused(['snapshots', '-r', repo, ...lockFlag, '--recover-versions'], 2),
    /--recover-versions only reads: it takes no --object-lock/,
  );
  assert.match(await refused(['retain', '-r', repo], 2), /pass --object-lock MODE:PERIOD/);
});

test('a lock policy on a bucket created without Object Lock is refused, naming the setting and the remedy', async () => {
  const stderr = await refused(['init', '-r', `s3:${minio.endpoint}/${plain}/app`, ...lockFlag], 1);
  assert.match(stderr, /objectLock: bucket "plain" .*does not have S3 Object Lock enabled/);
  assert.match(stderr, /x-amz-bucket-object-lock-enabled/);
});

let snapshot = '';

test('init, backup and retain with --object-lock; forget keeps the retained snapshot and says until when', async () => {
  await ok(['init', '-r', repo, ...lockFlag]);
  snapshot = parseJSON<{ snapshot_id: string }>(
    await ok(['backup', data, '-r', repo, ...lockFlag, '--json']),
  ).snapshot_id;
  await restic({ repo, password: 'pw', env }, ['check', '--read-data']);
  const retained = parseJSON<{ files: number; snapshots: number }>(
    await ok(['retain', '-r', repo, ...lockFlag, '--json']),
  );
  assert.equal(retained.snapshots, 1);
  assert.ok(retained.files >= 5, JSON.stringify(retained));
  const forgot = await ok(['forget', snapshot, '-r', repo, ...lockFlag]);
  assert.match(forgot.stderr + forgot.stdout, /removed 0 snapshots/);
  assert.match(
    forgot.stderr + forgot.stdout,
    new RegExp(`kept 1 file under S3 Object Lock retention \\(snapshot ${snapshot.slice(0, 8)}\\), the last until 20`),
  );
});

test('after every object is deleted with the same credentials, --recover-versions lists, restores and copies', async () => {
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: locked, Prefix: 'app/' }));
  for (const o of listed.Contents ?? []) await s3.send(new DeleteObjectCommand({ Bucket: locked, Key: o.Key }));
  assert.notEqual((await run(['snapshots', '-r', repo])).code, 0, 'the deleted repository is gone for normal reads');

  const recovered = ['-r', repo, '--recover-versions'];
  assert.match((await ok(['snapshots', ...recovered])).stdout, new RegExp(snapshot.slice(0, 8)));
  const target = join(work, 'restored');
  await ok(['restore', snapshot, ...recovered, '--target', target]);
  assert.deepEqual(await compareTrees(data, join(target, data), { sparse: false }), []);
  const backupRefused = await refused(['backup', data, ...recovered], 1);
  assert.match(backupRefused, /recoverVersions: .* does not save (pack|index|snapshot) files/);

  const rebuilt = join(work, 'rebuilt');
  await ok(['init', '-r', rebuilt]);
  const copied = parseJSON<{ snapshots: { copy: string }[] }>(
    await ok([
      'copy',
      snapshot,
      '-r',
      rebuilt,
      '--from-repo',
      repo,
      '--from-recover-versions',
      '--from-password-file',
      sourcePassword,
      '--json',
    ]),
  );
  await restic({ repo: rebuilt, password: 'pw' }, ['check', '--read-data']);
  assert.equal(copied.snapshots.length, 1);
});
