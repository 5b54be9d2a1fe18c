// Copies into a real MinIO, measured by the bytes MinIO receives (a counting proxy in front of it): a first copy
// sends the snapshot's data once, a second copy of a slightly changed snapshot sends only the change, and a copy
// SIGKILLed after some packs arrived, run again, adopts those packs instead of sending them again. restic verifies
// every byte of each destination and restores the files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compareTrees } from '../support/compare-tree.ts';
import { countingProxy } from '../support/counting-proxy.ts';
import { ferryOK, parseJSON, spawnFerry } from '../support/ferry-cli.ts';
import { startMinio } from '../support/minio.ts';
import { randomBytes } from '../support/repo.ts';
import { restic, resticJSON } from '../support/restic.ts';

const MiB = 1 << 20;
const work = await mkdtemp(join(tmpdir(), 'ferry-copy-resume-'));
const minio = await startMinio();
const proxy = await countingProxy(minio.endpoint);
test.after(async () => {
  await proxy.close();
  await minio.destroy();
  await rm(work, { recursive: true, force: true });
});
const bucket = await minio.bucket('site-b');
const env = { AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey };
const killDriver = join(import.meta.dirname, '..', 'faults', 'kill-driver.ts');

const data = join(work, 'data');
await mkdir(join(data, 'small'), { recursive: true });
for (let i = 0; i < 4; i++) await writeFile(join(data, `big-${i}.bin`), randomBytes(3 * MiB, 40 + i));
for (let i = 0; i < 40; i++) await writeFile(join(data, 'small', `f${i}`), randomBytes(500 + i * 131, 400 + i));

const siteA = join(work, 'site-a');
const passwordA = join(work, 'password-a');
const passwordB = join(work, 'password-b');
await writeFile(passwordA, 'site a\n');
await writeFile(passwordB, 'site b\n');
const ferryRepo = (args: string[]) => ferryOK(['repo', ...args, '--json'], { password: null, env });
const backupA = async () =>
  parseJSON<{ snapshot_id: string }>(
    await ferryRepo(['backup', data, '-r', siteA, '--password-file', passwordA, '--pack-size', '1']),
  ).snapshot_id;
await ferryRepo(['init', '-r', siteA, '--password-file', passwordA]);
const first = await backupA();

interface Summary {
  snapshots: { source: string; copy: string; skipped: boolean }[];
  pack_bytes_written: number;
  packs_written: number;
  packs_adopted: number;
}

/** The destination as ferry reaches it (through the proxy) and as restic does (straight to MinIO). */
function destination(prefix: string) {
  return { viaProxy: `s3:${proxy.endpoint}/${bucket}/${prefix}`, direct: `s3:${minio.endpoint}/${bucket}/${prefix}` };
}

const copyArgs = (to: string, snapshot: string) => [
  'copy',
  snapshot,
  '-r',
  to,
  '--password-file',
  passwordB,
  '--from-repo',
  siteA,
  '--from-password-file',
  passwordA,
  '--pack-size',
  '1',
];

async function copyMeasured(to: string, snapshot: string): Promise<{ summary: Summary; sent: number }> {
  proxy.reset();
  const summary = parseJSON<Summary>(await ferryRepo(copyArgs(to, snapshot)));
  return { summary, sent: proxy.received('PUT') };
}

async function verify(direct: string, copy: string): Promise<void> {
  const target = join(work, `restored-${randomUUID()}`);
  await restic({ repo: direct, password: 'site b', env }, ['check', '--read-data']);
  await restic({ repo: direct, password: 'site b', env }, ['restore', copy, '--target', target]);
  assert.deepEqual(await compareTrees(data, join(target, data), { sparse: false }), []);
}

let fullCopy = 0;
const incremental = destination('incremental');

test('a first copy sends the data once', async (t) => {
  await ferryRepo(['init', '-r', incremental.viaProxy, '--password-file', passwordB]);
  const started = Date.now();
  const one = await copyMeasured(incremental.viaProxy, first);
  t.diagnostic(`first copy: ${one.sent} bytes sent in ${Date.now() - started} ms`);
  fullCopy = one.sent;
  assert.ok(one.sent >= 12 * MiB, `the first copy sent ${one.sent} bytes for 12 MiB of random data`);
  assert.ok(one.sent <= one.summary.pack_bytes_written + 64 * 1024, `${one.sent} bytes for ${JSON.stringify(one)}`);
  await verify(incremental.direct, one.summary.snapshots[0].copy);
});

test('a copy killed after packs arrived resumes without sending them again', async (t) => {
  const b = destination('killed');
  await ferryRepo(['init', '-r', b.viaProxy, '--password-file', passwordB]);
  proxy.reset();
  const run = await spawnFerry(['repo', ...copyArgs(b.viaProxy, first), '--json'], {
    password: null,
    env: { ...env, FERRY_TEST_KILL: 'pack:5:after' },
    entry: killDriver,
  }).done;
  assert.equal(run.signal, 'SIGKILL', `the copy was not killed (exit ${run.code}): ${run.stderr}`);
  const killedSent = proxy.received('PUT');
  assert.deepEqual(await resticJSON({ repo: b.direct, password: 'site b', env }, ['snapshots']), []);

  const again = await copyMeasured(b.viaProxy, first);
  t.diagnostic(`killed copy sent ${killedSent} bytes; the rerun sent ${again.sent} of ${fullCopy}`);
  assert.ok(again.summary.packs_adopted >= 4, `${again.summary.packs_adopted} packs adopted`);
  assert.ok(
    again.sent <= fullCopy - killedSent + 64 * 1024,
    `the rerun sent ${again.sent} bytes; the killed run had sent ${killedSent} of ${fullCopy}`,
  );
  await ferryOK(['repo', 'unlock', '-r', b.viaProxy], { password: 'site b', env });
  await verify(b.direct, again.summary.snapshots[0].copy);
});

test('a copy into a repository that backed up the same files itself sends no data again', async (t) => {
  const b = destination('own-backup');
  await ferryRepo([
    'init',
    '-r',
    b.viaProxy,
    '--password-file',
    passwordB,
    '--copy-chunker-params',
    '--from-repo',
    siteA,
    '--from-password-file',
    passwordA,
  ]);
  await ferryRepo(['backup', data, '-r', b.viaProxy, '--password-file', passwordB]);
  const copied = await copyMeasured(b.viaProxy, first);
  t.diagnostic(`copy onto the same files backed up by the destination itself: ${copied.sent} bytes sent`);
  assert.equal(copied.summary.snapshots[0].skipped, false);
  assert.ok(copied.sent < 64 * 1024, `${copied.sent} bytes sent for data the destination holds`);
  await verify(b.direct, copied.summary.snapshots[0].copy);
});

test('a second copy of a changed snapshot sends only the change', async (t) => {
  await appendFile(join(data, 'small', 'f3'), randomBytes(200 * 1024, 77));
  const second = await backupA();
  const started = Date.now();
  const two = await copyMeasured(incremental.viaProxy, second);
  t.diagnostic(`second copy: ${two.sent} bytes sent in ${Date.now() - started} ms`);
  assert.ok(two.sent < 400 * 1024, `the second copy sent ${two.sent} bytes for a 200 KiB change`);
  assert.ok(two.sent >= 200 * 1024, `the second copy sent ${two.sent} bytes, less than the change`);
  await verify(incremental.direct, two.summary.snapshots[0].copy);
});
