// Issue 35: the README's first backup and restore, run exactly as printed (the fenced block after the marker
// comment), in a shell with ferry and kubectl on PATH and the box's bucket in the environment, as a newcomer runs
// it. It uses the fixed names it prints (namespaces app and restore, location first), removed before and after.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, symlink, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';
import { useCluster, type TestCluster } from '../support/cluster.ts';
import { cliEntry } from '../support/ferry-cli.ts';
import { ferryNamespace, installFerry } from '../support/ferry-install.ts';

const root = join(import.meta.dirname, '..', '..');
const marker = '<!-- run by test/e2e/cli-readme.test.ts -->';
const names = {
  namespaces: ['app', 'restore'].map((n) => `/api/v1/namespaces/${n}`),
  location: `/apis/ferry.dev/v1alpha1/namespaces/${ferryNamespace}/backupstoragelocations/first`,
  secrets: ['first-s3-credentials', 'first-repository-password'].map(
    (n) => `/api/v1/namespaces/${ferryNamespace}/secrets/${n}`,
  ),
};

let cluster: TestCluster;
let work: string;

/** The README's block after the marker, as printed. */
async function readmeBlock(): Promise<string> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  const at = readme.indexOf(marker);
  assert.ok(at >= 0, `README.md lacks ${marker}`);
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(block, 'no sh block after the marker');
  return block[1];
}

async function removeLeftovers(): Promise<void> {
  for (const path of [names.location, ...names.secrets, ...names.namespaces]) await cluster.kube.delete(path);
  for (const path of names.namespaces)
    for (const deadline = Date.now() + 5 * 60_000; (await cluster.kube.find(path)) && Date.now() < deadline;)
      await new Promise((r) => setTimeout(r, 1000));
}

before(
  async () => {
    cluster = await useCluster('cli-readme');
    await installFerry(cluster);
    await removeLeftovers();
    work = await mkdtemp(join(tmpdir(), 'ferry-readme-'));
    // the block's paths are relative to a checkout; its files (keys) are written here, not into the checkout
    await symlink(join(root, 'docs'), join(work, 'docs'));
    await mkdir(join(work, 'bin'));
    await symlink(cliEntry, join(work, 'bin', 'ferry'));
  },
  { timeout: 20 * 60_000 },
);

after(async () => {
  if (cluster) await removeLeftovers();
  await cluster?.cleanup();
  if (work) await rm(work, { recursive: true, force: true });
});

test("the README's first backup and restore runs as printed", { timeout: 20 * 60_000 }, async (t) => {
  const block = await readmeBlock();
  const env = {
    PATH: `${join(work, 'bin')}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? '',
    KUBECONFIG: cluster.kubeconfig,
    FERRY_S3_ENDPOINT: cluster.s3.endpoint,
    FERRY_S3_BUCKET: cluster.s3.bucket,
    AWS_ACCESS_KEY_ID: cluster.s3.accessKey,
    AWS_SECRET_ACCESS_KEY: cluster.s3.secretKey,
  };
  const started = Date.now();
  const shell = spawn('bash', ['--norc', '--noprofile', '-e', '-o', 'pipefail', '-x', '-c', block], { cwd: work, env });
  let out = '';
  shell.stdout.on('data', (b: Buffer) => (out += b.toString()));
  shell.stderr.on('data', (b: Buffer) => (out += b.toString()));
  const code = await new Promise<number | null>((resolve) => shell.once('close', resolve));
  t.diagnostic(`the block took ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const text = stripVTControlCharacters(out);
  assert.equal(code, 0, text);
  assert.match(text, /BackupStorageLocation first created in /);
  assert.match(text, /backup b1 Completed: snapshot [0-9a-f]{8}, \S+ \S+ in 3 files/);
  assert.match(text, /restore r1 Completed: restored \S+ \S+ in 3 files from snapshot [0-9a-f]{8}/);
  assert.match(text, /^Phase: +Completed$/m);
  assert.match(
    text,
    /BackupStorageLocation first and its Secret\(s\) first-s3-credentials, first-repository-password deleted/,
  );
  const restored = await cluster.kube.get('/api/v1/namespaces/restore/persistentvolumeclaims/data');
  assert.equal(restored.status.phase, 'Bound');
});
