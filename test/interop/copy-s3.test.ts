// A second site: `ferry repo copy` sends a filesystem repository's snapshots into S3 (a real MinIO) under another
// password, restic verifies every byte there, a repeated copy sends nothing, and with the first site gone the copy
// comes back from S3 into a new repository that restores the original files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareTrees } from '../support/compare-tree.ts';
import { ferryOK, parseJSON } from '../support/ferry-cli.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { startMinio } from '../support/minio.ts';
import { restic, resticJSON } from '../support/restic.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-copy-s3-'));
const minio = await startMinio();
test.after(async () => {
  await minio.destroy();
  await rm(work, { recursive: true, force: true });
});
const bucket = await minio.bucket('second-site');
const env = { AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey };
const data = join(work, 'data');
await makeFixtureTree(data, { smallFiles: 60 });

const siteA = join(work, 'site-a');
const siteB = `s3:${minio.endpoint}/${bucket}/copies`;
const passwordA = join(work, 'password-a');
const passwordB = join(work, 'password-b');
await writeFile(passwordA, 'site a\n');
await writeFile(passwordB, 'site b\n');
const a = ['-r', siteA, '--password-file', passwordA];
const b = ['-r', siteB, '--password-file', passwordB];
const ferryRepo = (...args: string[]) => ferryOK(['repo', ...args, '--json'], { password: null, env });

let firstID = '';

interface Summary {
  snapshots: { source: string; copy: string; skipped: boolean }[];
  packs_written: number;
}

test("a filesystem repository copied into S3 passes restic's check, and copying again sends nothing", async () => {
  await ferryRepo('init', ...a);
  await ferryRepo('init', ...b);
  const { snapshot_id: id } = parseJSON<{ snapshot_id: string }>(await ferryRepo('backup', data, ...a));
  firstID = id;
  const first = parseJSON<Summary>(
    await ferryRepo('copy', ...b, '--from-repo', siteA, '--from-password-file', passwordA),
  );
  assert.deepEqual(
    first.snapshots.map((s) => [s.source, s.skipped]),
    [[id, false]],
  );
  await restic({ repo: siteB, password: 'site b', env }, ['check', '--read-data']);
  const again = parseJSON<Summary>(
    await ferryRepo('copy', ...b, '--from-repo', siteA, '--from-password-file', passwordA),
  );
  assert.deepEqual([again.snapshots.map((s) => s.skipped), again.packs_written], [[true], 0]);
});

test('with the first site gone, the S3 copy comes back into a new repository and restores the files', async () => {
  await rm(siteA, { recursive: true, force: true });
  const siteC = join(work, 'site-c');
  await ferryRepo('init', '-r', siteC, '--password-file', passwordA);
  const back = parseJSON<Summary>(
    await ferryRepo(
      'copy',
      '-r',
      siteC,
      '--password-file',
      passwordA,
      '--from-repo',
      siteB,
      '--from-password-file',
      passwordB,
    ),
  );
  assert.equal(back.snapshots.length, 1);
  // a copy of a copy still names the first site's snapshot as its original
  const [copied] = await resticJSON<{ original: string }[]>({ repo: siteC, password: 'site a' }, ['snapshots']);
  assert.equal(copied.original, firstID);
  const target = join(work, 'restored');
  await ferryOK(
    ['repo', 'restore', back.snapshots[0].copy, '-r', siteC, '--password-file', passwordA, '--target', target],
    { password: null },
  );
  assert.deepEqual(await compareTrees(data, join(target, data), { sparse: false }), []);
});
