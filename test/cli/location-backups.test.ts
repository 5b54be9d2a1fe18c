// `ferry location backups LOCATION` against a real MinIO, with repositories written by the real restic under the
// location's derived passwords: every namespace folder under the prefix is found from the bucket alone (no
// DataUpload exists here, as on a second cluster), each snapshot is told with its DataUpload and PVC tags, a
// repository another password sealed is a problem that does not hide the rest, and bad input names the argument.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { holdingsTable, namespaceFlag, readHoldings } from '../../src/cli/location/backups.ts';
import { UsageError } from '../../src/cli/run.ts';
import type { KubeObject } from '../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../src/shared/kube/memory.ts';
import { repositoryPassword } from '../../src/shared/location/repository.ts';
import { startMinio } from '../support/minio.ts';
import { restic, resticJSON } from '../support/restic.ts';

const minio = await startMinio();
const work = await mkdtemp(join(tmpdir(), 'ferry-location-backups-'));
test.after(async () => {
  await minio.destroy();
  await rm(work, { recursive: true, force: true });
});
const bucket = await minio.bucket('site-b');
const locationSecret = 'the location password';
const s3env = { AWS_ACCESS_KEY_ID: minio.accessKey, AWS_SECRET_ACCESS_KEY: minio.secretKey };
const repoOf = (ns: string) => `s3:${minio.endpoint}/${bucket}/ferry/${ns}`;

const kube = new MemoryKube();
const b64 = (s: string) => Buffer.from(s).toString('base64');
kube.seed(
  {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupStorageLocation',
    metadata: { name: 'site-b', namespace: 'ferry-system' },
    spec: {
      s3: { endpoint: minio.endpoint, bucket, prefix: 'ferry' },
      credential: { name: 's3' },
      repositoryPassword: { name: 'repo', key: 'password' },
      allowedNamespaces: ['*'],
    },
  } as KubeObject,
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's3', namespace: 'ferry-system' },
    data: { AWS_ACCESS_KEY_ID: b64(minio.accessKey), AWS_SECRET_ACCESS_KEY: b64(minio.secretKey) },
  } as KubeObject,
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'repo', namespace: 'ferry-system' },
    data: { password: b64(locationSecret) },
  } as KubeObject,
);

/** A repository of `ns` as the location's derived password opens it, with one backup per (dataupload, pvc). */
async function backups(ns: string, made: [string, string][], password = repositoryPassword(locationSecret, ns)) {
  const target = { repo: repoOf(ns), password, env: s3env };
  await restic(target, ['init']);
  const ids: string[] = [];
  for (const [du, pvc] of made) {
    const dir = join(work, `${ns}-${du}`);
    await writeFile(dir, `data of ${ns}/${du}\n`.repeat(1000));
    const tags = ['--tag', `ferry.dev/dataupload=${du}`, '--tag', `ferry.dev/pvc=${pvc}`];
    ids.push((await resticJSON<{ snapshot_id: string }>(target, ['backup', dir, ...tags])).snapshot_id);
  }
  return ids;
}

const [app1, app2] = await backups('app', [
  ['db-1', 'data'],
  ['db-2', 'data'],
]);
const [web1] = await backups('web', [['site-1', 'html']]);
await backups('sealed', [['x', 'y']], 'not the derived password');
// a folder that holds no repository, and one that cannot name a namespace
await minio.client.send(new PutObjectCommand({ Bucket: bucket, Key: 'ferry/notes/readme.txt', Body: 'hello' }));
await minio.client.send(new PutObjectCommand({ Bucket: bucket, Key: 'ferry/Not_A_NS/x', Body: 'x' }));

test('every namespace folder under the prefix is listed from the bucket, with each snapshot’s tags', async () => {
  const h = await readHoldings(kube, 'ferry-system', 'site-b', undefined);
  assert.deepEqual(
    h.backups.map((b) => [b.namespace, b.snapshotID, b.dataUpload, b.pvc]),
    [
      ['app', app1, 'db-1', 'data'],
      ['app', app2, 'db-2', 'data'],
      ['web', web1, 'site-1', 'html'],
    ],
  );
  for (const b of h.backups) {
    assert.match(b.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.ok(Math.abs(Date.parse(b.time) - Date.now()) < 10 * 60_000, b.time);
    assert.equal(b.size, `data of ${b.namespace}/${b.dataUpload}\n`.length * 1000, `${b.namespace}/${b.dataUpload}`);
  }
  // the repository another password sealed is said, by namespace, without hiding the others
  assert.deepEqual(
    h.problems.map((p) => p.namespace),
    ['sealed'],
  );
  assert.match(h.problems[0].message, /password|key/i);
  const table = holdingsTable(h).split('\n');
  assert.match(table[0], /^NAMESPACE\s+SNAPSHOT\s+TIME\s+DATAUPLOAD\s+PVC\s+SIZE$/);
  assert.match(table[1], new RegExp(`^app\\s+${app1.slice(0, 8)}\\s+\\S+Z\\s+db-1\\s+data\\s+16\\.6 KiB$`));
});

test('--namespace reads that repository only; one with no repository holds nothing', async () => {
  const h = await readHoldings(kube, 'ferry-system', 'site-b', 'web');
  assert.deepEqual(
    h.backups.map((b) => b.snapshotID),
    [web1],
  );
  assert.deepEqual(h.problems, []);
  assert.deepEqual(await readHoldings(kube, 'ferry-system', 'site-b', 'nothing-here'), {
    location: 'site-b',
    backups: [],
    problems: [],
  });
});

test('a location that does not exist, or a malformed --namespace, is bad usage saying what is allowed', async () => {
  await assert.rejects(readHoldings(kube, 'ferry-system', 'site-c', undefined), (err: Error) => {
    assert.ok(err instanceof UsageError);
    assert.equal(
      err.message,
      'LOCATION: "site-c" is not a storage location in ferry-system; the locations are: site-b',
    );
    return true;
  });
  for (const bad of ['App', '../app', 'a/b', '', '-app', 'a'.repeat(64), true])
    assert.throws(
      () => namespaceFlag(bad),
      (err: Error) =>
        err instanceof UsageError && /^--namespace ".*" is not a namespace name: up to 63/.test(err.message),
    );
  assert.equal(namespaceFlag('app'), 'app');
});
