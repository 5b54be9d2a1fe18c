// A repository that cannot be opened says why in one line and exits 1: a wrong password, an empty directory, a
// path that does not exist, an S3 prefix holding nothing. Every command that opens a repository behaves alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { ferry, hasStackTrace } from '../support/ferry-cli.ts';
import type { FerryRun } from '../support/ferry-cli.ts';
import { startMinio } from '../support/minio.ts';
import { testKDF, testPassword } from '../support/repo.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-faults-open-'));
const repoPath = join(work, 'repo');
const empty = join(work, 'empty');
const missing = join(work, 'no', 'such', 'place');
await mkdir(empty);
await (await Repository.init(new FsBackend(repoPath), testPassword, { kdf: testKDF })).close();
test.after(() => rm(work, { recursive: true, force: true }));

/** Commands that open an existing repository, with the arguments each needs besides -r. */
const commands: string[][] = [
  ['snapshots'],
  ['check'],
  ['backup', work],
  ['restore', 'latest', '--target', join(work, 'target')],
  ['forget', 'abcdef12'],
  ['prune'],
  ['unlock'],
];

function assertOneLineFailure(run: FerryRun, pattern: RegExp, what: string): void {
  assert.equal(run.code, 1, `${what}: exit ${run.code}\n${run.stderr}`);
  assert.match(run.stderr, pattern, what);
  assert.ok(!hasStackTrace(run.stderr), `${what}: a stack trace instead of a message:\n${run.stderr}`);
}

test('a wrong password: exit 1 and "wrong password" from every command', async () => {
  for (const cmd of commands) {
    const run = await ferry(['repo', cmd[0], '-r', repoPath, ...cmd.slice(1)], { password: 'not the password' });
    assertOneLineFailure(run, /wrong password/, `repo ${cmd[0]}`);
  }
});

test('an empty directory is "no repository", and nothing is written into it', async () => {
  for (const cmd of commands) {
    const run = await ferry(['repo', cmd[0], '-r', empty, ...cmd.slice(1)]);
    assertOneLineFailure(run, /no repository/, `repo ${cmd[0]}`);
  }
  assert.deepEqual(await readdir(empty), []);
});

test('a path that does not exist is "no repository" and is not created', async () => {
  const run = await ferry(['repo', 'snapshots', '-r', missing]);
  assertOneLineFailure(run, /no repository/, 'repo snapshots');
  const backupRun = await ferry(['repo', 'backup', '-r', missing, work]);
  assertOneLineFailure(backupRun, /no repository/, 'repo backup');
  await assert.rejects(readdir(join(work, 'no')), { code: 'ENOENT' });
});

test('init refuses to overwrite an existing repository', async () => {
  const run = await ferry(['repo', 'init', '-r', repoPath]);
  assertOneLineFailure(run, /already exists/, 'repo init');
});

test('an S3 prefix with no repository is "no repository"; a missing bucket is named', async () => {
  const minio = await startMinio();
  try {
    const bucket = await minio.bucket('empty');
    const env = { AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey };
    const run = await ferry(['repo', 'snapshots', '-r', `s3:${minio.endpoint}/${bucket}/nothing-here`], { env });
    assertOneLineFailure(run, /no repository/, 'empty prefix');
    const noBucket = await ferry(['repo', 'snapshots', '-r', `s3:${minio.endpoint}/no-such-bucket`], { env });
    assertOneLineFailure(noBucket, /no-such-bucket/, 'missing bucket');
    const badKey = await ferry(['repo', 'snapshots', '-r', `s3:${minio.endpoint}/${bucket}`], {
      env: { ...env, AWS_SECRET_ACCESS_KEY: 'wrong' },
    });
    assertOneLineFailure(badKey, /credential|access|denied|signature/i, 'wrong secret key');
  } finally {
    await minio.destroy();
  }
});
