// The S3 backend against a real MinIO: the shared contract, plus what only S3 has (bucket and credential
// failures, prefixes, multipart, TLS with a private CA, the server going away mid-save).

import { HeadObjectCommand, ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { isPermanent } from '../../../src/engine/backend/backend.ts';
import type { Handle } from '../../../src/engine/backend/backend.ts';
import { openBackend } from '../../../src/engine/backend/open.ts';
import { S3Backend } from '../../../src/engine/backend/s3.ts';
import type { S3Options } from '../../../src/engine/backend/s3.ts';
import { startMinio } from '../../support/minio.ts';
import { backendContract, handle, randomID } from './contract.ts';

const minio = await startMinio();
const bucket = await minio.bucket('ferry-contract');
const credentials = { accessKeyId: minio.accessKey, secretAccessKey: minio.secretKey };
const raw = new S3Client({ endpoint: minio.endpoint, region: 'us-east-1', forcePathStyle: true, credentials });

after(async () => {
  raw.destroy();
  await minio.destroy();
});

function backend(opts: Partial<S3Options> = {}): S3Backend {
  return new S3Backend({
    endpoint: minio.endpoint,
    bucket,
    prefix: `repo-${randomID().slice(0, 12)}`,
    credentials,
    ...opts,
  });
}

async function keysUnder(prefix: string): Promise<string[]> {
  const res = await raw.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (res.Contents ?? []).map((o) => o.Key ?? '').sort();
}

// a low multipart limit, so the contract's large object goes in parts (the default sends packs in one PUT)
backendContract({ name: 's3 on MinIO', make: async () => backend({ multipartAbove: 16 * 1024 * 1024 }) });

describe('s3 backend on MinIO', () => {
  it("stores restic's layout under the prefix", async () => {
    const b = backend({ prefix: 'team/repo1' });
    const pack = handle('pack');
    const key = handle('key');
    await b.save(pack, randomBytes(10));
    await b.save(key, randomBytes(10));
    await b.save(handle('config'), randomBytes(10));
    assert.deepEqual(
      await keysUnder('team/repo1/'),
      [
        'team/repo1/config',
        `team/repo1/data/${pack.name.slice(0, 2)}/${pack.name}`,
        `team/repo1/keys/${key.name}`,
      ].sort(),
    );
    await b.close();
  });

  it('keeps repositories under different prefixes of one bucket apart', async () => {
    const [a, b] = [backend(), backend()];
    await a.save(handle('snapshot'), randomBytes(10));
    for await (const info of b.list('snapshot')) assert.fail(`saw ${info.name} of another prefix`);
    await Promise.all([a.close(), b.close()]);
  });

  it('uploads a pack-sized object in one request and larger objects in several parts', async () => {
    const b = backend({ prefix: 'multipart', multipartAbove: 16 * 1024 * 1024 });
    const etag = async (size: number): Promise<string> => {
      const h = handle('pack');
      const data = randomBytes(size);
      await b.save(h, data);
      assert.ok(Buffer.from(await b.load(h)).equals(data));
      return (
        (
          await raw.send(
            new HeadObjectCommand({ Bucket: bucket, Key: `multipart/data/${h.name.slice(0, 2)}/${h.name}` }),
          )
        ).ETag ?? ''
      );
    };
    assert.doesNotMatch(await etag(16 * 1024 * 1024), /-\d+"$/, 'an object at the limit is one PUT');
    assert.match(await etag(20 * 1024 * 1024 + 1), /-3"$/, 'a multipart ETag ends in -<parts> (8 MiB parts)');
    await b.close();
  });

  it('aborts an interrupted multipart upload instead of leaving parts behind', async () => {
    const b = backend({ prefix: 'aborted', multipartAbove: 16 * 1024 * 1024 });
    const ac = new AbortController();
    const pack = handle('pack');
    // MinIO lists the uploads of one object, named in full
    const key = `aborted/data/${pack.name.slice(0, 2)}/${pack.name}`;
    const uploadsOf = async (): Promise<number> =>
      (await raw.send(new ListMultipartUploadsCommand({ Bucket: bucket, Prefix: key }))).Uploads?.length ?? 0;
    const saving = b.save(pack, randomBytes(64 * 1024 * 1024), ac.signal);
    // abort once the multipart upload exists, not after a fixed delay: a fast machine finished 40 MiB in 150 ms
    const settled = saving.then(
      () => true,
      () => true,
    );
    while (!(await Promise.race([settled, Promise.resolve(false)])) && (await uploadsOf()) === 0) {
      await new Promise((r) => setTimeout(r, 5));
    }
    ac.abort();
    await assert.rejects(saving);
    // the abort request is sent as the upload unwinds; give it a moment
    let uploads = 1;
    for (let i = 0; i < 50 && uploads > 0; i++) {
      uploads = await uploadsOf();
      if (uploads > 0) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(uploads, 0);
    assert.deepEqual(await keysUnder('aborted/'), []);
    await b.close();
  });

  it('signs a save with the content hash the caller gives, and the server refuses bytes that no longer match it', async () => {
    const b = openBackend(`s3:${minio.endpoint}/${bucket}/hashed-${randomID().slice(0, 8)}`, { s3: { credentials } });
    const data = randomBytes(4096);
    const id = createHash('sha256').update(data).digest('hex');
    await b.save({ type: 'pack', name: id }, data, undefined, id);
    assert.deepEqual(Buffer.from(await b.load({ type: 'pack', name: id })), data);
    // bytes damaged after they were hashed and named: one bit
    const damaged = Uint8Array.from(data);
    damaged[100] ^= 1;
    const other = createHash('sha256').update(randomBytes(8)).digest('hex');
    const started = performance.now();
    await assert.rejects(b.save({ type: 'index', name: other }, damaged, undefined, other), (err: Error) => {
      assert.ok(isPermanent(err));
      assert.equal(
        err.message,
        `S3 at ${minio.endpoint} refused index ${other}: the bytes it received do not hash to the file's name (XAmzContentSHA256Mismatch); they changed after they were hashed, in memory or on the way, and nothing was stored.`,
      );
      return true;
    });
    assert.ok(performance.now() - started < 3000, 'not retried');
    await assert.rejects(b.load({ type: 'index', name: other }), (err: Error) => b.isNotExist(err));
    await b.close();
  });

  it('fails fast with one clear permanent error for a missing bucket', async () => {
    const b = openBackend(`s3:${minio.endpoint}/no-such-bucket/repo`, { s3: { credentials } });
    const started = performance.now();
    for (const op of [() => b.create(), () => b.stat(handle('pack')), () => b.save(handle('lock'), randomBytes(1))]) {
      await assert.rejects(op(), (err: Error) => {
        assert.ok(isPermanent(err));
        assert.equal(b.isNotExist(err), false);
        assert.equal(err.message, `Bucket "no-such-bucket" does not exist at ${minio.endpoint}.`);
        return true;
      });
    }
    assert.ok(performance.now() - started < 3000, 'not retried');
    await b.close();
  });

  it('fails fast with one clear permanent error for wrong credentials, without echoing them', async () => {
    const secret = `wrong-${randomID()}`;
    const b = openBackend(`s3:${minio.endpoint}/${bucket}/repo`, {
      s3: { credentials: { accessKeyId: minio.accessKey, secretAccessKey: secret } },
    });
    const started = performance.now();
    await assert.rejects(b.load(handle('pack')), (err: Error) => {
      assert.ok(isPermanent(err));
      // the GET's answer names the refusal
      assert.match(
        err.message,
        /refused access to bucket "ferry-contract" \(SignatureDoesNotMatch\): check the credentials/,
      );
      assert.ok(!err.message.includes(secret));
      return true;
    });
    assert.ok(performance.now() - started < 3000, 'not retried');
    await b.close();
  });

  it('reads credentials and region from the standard AWS environment variables', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: minio.accessKey,
      AWS_SECRET_ACCESS_KEY: minio.secretKey,
      AWS_DEFAULT_REGION: 'eu-central-1',
    });
    try {
      const b = openBackend(`s3:${minio.endpoint}/${bucket}/env-creds`);
      const h = handle('index');
      await b.save(h, randomBytes(5));
      assert.equal((await b.stat(h)).size, 5);
      await b.close();
    } finally {
      process.env = saved;
    }
  });

  it("without credentials at hand, asks the SDK's provider chain, and says so when it finds none", async () => {
    const saved = { ...process.env };
    for (const k of [
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'AWS_SESSION_TOKEN',
      'AWS_PROFILE',
      'AWS_WEB_IDENTITY_TOKEN_FILE',
      'AWS_CONTAINER_CREDENTIALS_FULL_URI',
      'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    ])
      delete process.env[k];
    Object.assign(process.env, {
      AWS_EC2_METADATA_DISABLED: 'true',
      AWS_SHARED_CREDENTIALS_FILE: '/nonexistent',
      AWS_CONFIG_FILE: '/nonexistent',
    });
    try {
      const b = openBackend(`s3:${minio.endpoint}/${bucket}/no-creds`);
      await assert.rejects(b.load(handle('index')), (err: Error) => {
        assert.ok(isPermanent(err));
        assert.match(err.message, /No S3 credentials found/);
        return true;
      });
      await b.close();
    } finally {
      process.env = saved;
    }
  });

  it('rides out a server restart in the middle of a save (through the retry wrapper)', async () => {
    // the jitter pinned near its ceiling, so the attempts span about 17 s: drawn at random, all ten once came within
    // the 1.5 s the server was down, and the save failed with ECONNREFUSED before the restart (CI, 2026-11-26)
    const retry = { initialDelayMs: 200, maxDelayMs: 1000, attempts: 20, random: () => 0.99 };
    const b = openBackend(`s3:${minio.endpoint}/${bucket}/restart`, { s3: { credentials }, retry });
    const h: Handle = handle('pack');
    const data = randomBytes(12 * 1024 * 1024);
    await b.stat(handle('pack')).catch(() => {});
    await minio.stop();
    const saving = b.save(h, data);
    await new Promise((r) => setTimeout(r, 1500));
    await minio.restart();
    await saving;
    assert.ok(Buffer.from(await b.load(h)).equals(data));
    await b.close();
  });
});

describe('s3 backend over TLS with a private CA', () => {
  it('trusts the endpoint only through the given CA file', async () => {
    const tls = await startMinio({ tls: true });
    try {
      const tlsBucket = await tls.bucket('tls');
      const creds = { accessKeyId: tls.accessKey, secretAccessKey: tls.secretKey };
      const trusted = openBackend(`s3:${tls.endpoint}/${tlsBucket}/repo`, {
        s3: { credentials: creds, caFile: tls.caFile },
      });
      const h = handle('snapshot');
      await trusted.save(h, randomBytes(7));
      assert.equal((await trusted.stat(h)).size, 7);
      await trusted.close();
      const untrusted = openBackend(`s3:${tls.endpoint}/${tlsBucket}/repo`, { s3: { credentials: creds } });
      await assert.rejects(untrusted.stat(h), (err: Error) => {
        assert.ok(isPermanent(err), 'an untrusted certificate is not retried');
        assert.match(err.message, /TLS certificate of https:\/\/127\.0\.0\.1:\d+ is not trusted/);
        return true;
      });
      await untrusted.close();
    } finally {
      await tls.destroy();
    }
  });
});
