// An immutable location on a real MinIO bucket created with S3 Object Lock: every object ferry writes carries
// retention (lock files aside), an attacker holding the location's own credentials who overwrites files, plants their
// own and deletes every object cannot stop a restore through the recovery read mode, prune and forget leave
// what is still retained in place and say so (and free it on a later run once retention ends), retention follows
// the snapshots that are kept, and a lock policy on a bucket without Object Lock is refused at open.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DeleteObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
} from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, Handle, ObjectLockPolicy } from '../../src/engine/backend/backend.ts';
import { backup } from '../../src/engine/operations/backup.ts';
import { forget } from '../../src/engine/operations/forget.ts';
import { initRepository, openRepository } from '../../src/engine/operations/open.ts';
import { prune } from '../../src/engine/operations/prune.ts';
import { restore } from '../../src/engine/operations/restore.ts';
import { extendRetention } from '../../src/engine/operations/extend-retention.ts';
import { openBackend } from '../../src/engine/operations/storage.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { startMinio } from '../support/minio.ts';
import { randomBytes, testKDF, testPassword, testPolynomial } from '../support/repo.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-object-lock-'));
const minio = await startMinio();
const s3 = minio.client;
test.after(async () => {
  await minio.destroy();
  await rm(work, { recursive: true, force: true });
});
const bucket = await minio.bucket('immutable', { objectLock: true });
const credentials = { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey };
const data = join(work, 'data');
await makeFixtureTree(data, { smallFiles: 30 });

function location(prefix: string, s3opts: { objectLock?: ObjectLockPolicy; recoverVersions?: boolean } = {}) {
  return openBackend(`s3:${minio.endpoint}/${bucket}/${prefix}`, { s3: { credentials, ...s3opts } });
}

async function keys(prefix: string): Promise<string[]> {
  const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (page.Contents ?? []).map((o) => o.Key ?? '');
}

test('objects carry retention; deleted and overwritten with the same credentials, they restore in recovery mode', async () => {
  const policy = { mode: 'COMPLIANCE', retentionMs: 120_000 } as const;
  const repo = await initRepository(location('site', { objectLock: policy }), testPassword, {
    kdf: testKDF,
    polynomial: testPolynomial,
  });
  const { snapshotID } = await backup(repo, { paths: [data] });
  await repo.close();

  const stored = await keys('site/');
  const pack = stored.find((k) => k.startsWith('site/data/'))!;
  const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: pack }));
  assert.equal(head.ObjectLockMode, 'COMPLIANCE');
  assert.ok(head.ObjectLockRetainUntilDate!.getTime() > Date.now() + 100_000, String(head.ObjectLockRetainUntilDate));
  // the backup's lock file is gone for good, every version of it: retention would have kept it blocking others
  const locks = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: 'site/locks/' }));
  assert.deepEqual([...(locks.Versions ?? []), ...(locks.DeleteMarkers ?? [])], []);

  // the attacker: other bytes under the names of a pack, the config, the snapshot, an index file and the key, files of
  // their own named by their content, then every object deleted
  const overwritten = [
    pack,
    'site/config',
    ...['snapshots/', 'index/', 'keys/'].map((f) => stored.find((k) => k.startsWith(`site/${f}`))!),
  ];
  for (const [i, key] of overwritten.entries()) {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: randomBytes(4096, 9 + i) }));
  }
  for (const [i, folder] of ['snapshots', 'index', 'keys', 'data/ab'].entries()) {
    const junk = randomBytes(500, 50 + i);
    const name = createHash('sha256').update(junk).digest('hex');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `site/${folder}/${name}`, Body: junk }));
  }
  for (const key of await keys('site/')) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  assert.deepEqual(await keys('site/'), []);
  const versions = await s3.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: pack }));
  // listed newest first: the last is the one ferry wrote
  const original = versions.Versions!.at(-1)!;
  await assert.rejects(
    s3.send(new DeleteObjectCommand({ Bucket: bucket, Key: pack, VersionId: original.VersionId })),
    /WORM|AccessDenied|protected/i,
    'a retained version cannot be deleted',
  );
  await assert.rejects(openRepository(location('site'), testPassword), /does not exist|no repository/i);

  const recovered = await openRepository(location('site', { recoverVersions: true }), testPassword);
  const target = join(work, 'restored');
  const r = await restore(recovered, { snapshot: snapshotID, target: { kind: 'directory', path: target } });
  assert.equal(r.snapshot.id, snapshotID);
  await recovered.close();
  assert.deepEqual(await compareTrees(data, join(target, data), { sparse: false }), []);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

/** The backend, stopping the backup it serves once a pack is stored: that pack is left unindexed (an orphan). */
function stoppingAfterPack(inner: Backend, stop: AbortController): Backend {
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === 'save') {
        return async (h: Handle, bytes: Uint8Array, signal?: AbortSignal, sha256?: string) => {
          await target.save(h, bytes, signal, sha256);
          if (h.type === 'pack') stop.abort(new Error('stopped after a pack'));
        };
      }
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

test('prune and forget keep what is retained and free it later; retention follows the snapshots kept', async () => {
  const policy = { mode: 'GOVERNANCE', retentionMs: 6000 } as const;
  const backend = location('retained', { objectLock: policy });
  const repo = await initRepository(backend, testPassword, { kdf: testKDF, polynomial: testPolynomial });
  const kept = (await backup(repo, { paths: [data] })).snapshotID;
  const extra = join(work, 'extra');
  await writeFile(extra, randomBytes(3 << 20, 11));
  const stop = new AbortController();
  const interrupted = await openRepository(stoppingAfterPack(backend, stop), testPassword);
  await assert.rejects(backup(interrupted, { paths: [extra], signal: stop.signal }));
  const orphanWritten = Date.now();

  const tooEarly = await forget(repo, [kept], { prune: {} });
  assert.deepEqual(tooEarly.removed, []);
  assert.deepEqual(
    tooEarly.retained.map((f) => [f.type, f.name]),
    [['snapshot', kept]],
  );
  const pruned = tooEarly.pruned!;
  assert.equal(pruned.packsDeleted, 0);
  assert.ok(
    pruned.retained.some((f) => f.type === 'pack'),
    `the orphan pack is reported as retained: ${JSON.stringify(pruned.retained)}`,
  );

  // a moment later, the snapshot kept has everything it needs extended; the orphan's retention runs out
  await sleep(2000);
  const extended = await extendRetention(repo);
  assert.equal(extended.snapshots, 1);
  assert.equal(extended.extended, extended.files, JSON.stringify(extended));
  await sleep(orphanWritten + policy.retentionMs + 1500 - Date.now());

  const later = await prune(repo);
  assert.ok(later.packsDeleted >= 1, `the orphan is freed once its retention ended: ${JSON.stringify(later)}`);
  assert.ok(!later.retained.some((f) => f.type === 'pack'), JSON.stringify(later.retained));
  const stillKept = await forget(repo, [kept]);
  assert.deepEqual(stillKept.removed, [], 'the extended snapshot is still retained');
  await repo.close();
  // opened without the policy, the repository still keeps off what is retained (and hides nothing behind a marker)
  const withoutPolicy = await openRepository(location('retained'), testPassword);
  assert.deepEqual((await forget(withoutPolicy, [kept])).removed, []);
  await withoutPolicy.close();
  assert.ok((await keys('retained/snapshots/')).length === 1, 'the snapshot is still listed');
});

test('retention extended under a GOVERNANCE policy keeps the COMPLIANCE mode objects already have', async () => {
  const strict = { kdf: testKDF, polynomial: testPolynomial };
  const first = await initRepository(
    location('stricter', { objectLock: { mode: 'COMPLIANCE', retentionMs: 2000 } }),
    testPassword,
    strict,
  );
  await backup(first, { paths: [data] });
  await first.close();
  const relaxed = await openRepository(
    location('stricter', { objectLock: { mode: 'GOVERNANCE', retentionMs: 60_000 } }),
    testPassword,
  );
  const r = await extendRetention(relaxed);
  await relaxed.close();
  assert.equal(r.extended, r.files);
  const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: 'stricter/config' }));
  assert.equal(head.ObjectLockMode, 'COMPLIANCE');
  assert.ok(head.ObjectLockRetainUntilDate!.getTime() > Date.now() + 50_000, String(head.ObjectLockRetainUntilDate));
});

test('a file under a legal hold is kept however old its retention, and goes once the hold is lifted', async () => {
  const repo = await initRepository(
    location('held', { objectLock: { mode: 'GOVERNANCE', retentionMs: 1000 } }),
    testPassword,
    {
      kdf: testKDF,
      polynomial: testPolynomial,
    },
  );
  const { snapshotID } = await backup(repo, { paths: [data] });
  const Key = `held/snapshots/${snapshotID}`;
  await s3.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key, LegalHold: { Status: 'ON' } }));
  // past the retention the object carries (S3 keeps whole seconds, so not a fixed time after the write): only the
  // hold keeps it then
  const { ObjectLockRetainUntilDate: until } = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key }));
  await sleep(until!.getTime() - Date.now() + 500);
  const held = await forget(repo, [snapshotID]);
  assert.deepEqual(
    held.retained.map((f) => [f.name, f.until]),
    [[snapshotID, null]],
  );
  await s3.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key, LegalHold: { Status: 'OFF' } }));
  assert.deepEqual((await forget(repo, [snapshotID])).removed, [snapshotID]);
  await repo.close();
});

test('a lock policy on a bucket without Object Lock is refused at open, naming the setting', async () => {
  const plain = await minio.bucket('plain');
  const backend = openBackend(`s3:${minio.endpoint}/${plain}/repo`, {
    s3: { credentials, objectLock: { mode: 'GOVERNANCE', retentionMs: 60_000 } },
  });
  await assert.rejects(
    initRepository(backend, testPassword, { kdf: testKDF }),
    /objectLock: bucket "plain" .* does not have S3 Object Lock enabled.*x-amz-bucket-object-lock-enabled/,
  );
  assert.deepEqual(await keys('repo/'), []);
  assert.throws(
    () =>
      openBackend(`s3:${minio.endpoint}/${plain}/repo`, {
        s3: { credentials, objectLock: { mode: 'LEGAL' as 'GOVERNANCE', retentionMs: 1 } },
      }),
    /objectLock.mode "LEGAL" is not an S3 Object Lock mode: use GOVERNANCE or COMPLIANCE/,
  );
});
