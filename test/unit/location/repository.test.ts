import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import type { BackupStorageLocationSpec } from '../../../src/shared/api/types.ts';
import { repositoryIdentity, repositoryLocation, repositoryPassword } from '../../../src/shared/location/repository.ts';
import { degree, isIrreducible } from '../../../src/engine/chunker/polynomial.ts';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { Repository } from '../../../src/engine/repository/repository.ts';
import { repositoryAccess } from '../../../src/shared/location/access.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import type { KubeObject, ObjectKey } from '../../../src/shared/kube/kube.ts';
import { parseS3Location } from '../../../src/engine/backend/open.ts';

const spec = (over: Partial<BackupStorageLocationSpec['s3']> = {}): BackupStorageLocationSpec => ({
  s3: { endpoint: 'http://127.0.0.1:9000', bucket: 'ferry', prefix: 'backups/prod', ...over },
  credential: { name: 'creds' },
  repositoryPassword: { name: 'repo-pass', key: 'password' },
  allowedNamespaces: ['team-a', 'team-b'],
  crossNamespaceRestores: [{ from: 'team-a', to: ['team-b'] }],
});

test('the repository URL is s3:<endpoint>/<bucket>/<prefix>/<namespace> and parses back', () => {
  const url = repositoryLocation(spec(), 'team-a');
  assert.equal(url, 's3:http://127.0.0.1:9000/ferry/backups/prod/team-a');
  assert.deepEqual(parseS3Location(url), {
    endpoint: 'http://127.0.0.1:9000',
    bucket: 'ferry',
    prefix: 'backups/prod/team-a',
  });
  assert.equal(
    repositoryLocation(spec({ prefix: undefined, endpoint: 'https://s3.example.com/' }), 'x'),
    's3:https://s3.example.com/ferry/x',
  );
  assert.equal(repositoryLocation(spec({ prefix: '/a//b/' }), 'x'), 's3:http://127.0.0.1:9000/ferry/a/b/x');
  assert.throws(() => repositoryLocation(spec(), '../etc'), /not a namespace name/);
  assert.throws(() => repositoryLocation(spec({ endpoint: 'http://h/path' }), 'x'), /http\(s\):\/\/host/);
});

test('the password is hex HMAC-SHA256 of the namespace under the location secret (checked with WebCrypto)', async () => {
  const secret = 'location-secret';
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode('ferry.dev/repository/team-a'));
  assert.equal(repositoryPassword(secret, 'team-a'), Buffer.from(mac).toString('hex'));
  assert.equal(repositoryPassword(Buffer.from(secret), 'team-a'), repositoryPassword(secret, 'team-a'));
  assert.notEqual(repositoryPassword(secret, 'team-b'), repositoryPassword(secret, 'team-a'));
  assert.notEqual(repositoryPassword('other', 'team-a'), repositoryPassword(secret, 'team-a'));
  assert.throws(() => repositoryPassword('', 'team-a'), /empty/);
});

test('the identity a repository is created with is derived per namespace: same inputs, same key; usable and distinct', async () => {
  const a = repositoryIdentity('location secret', 'team-a');
  assert.deepEqual(repositoryIdentity('location secret', 'team-a'), a);
  const b = repositoryIdentity('location secret', 'team-b');
  assert.notDeepEqual(b.masterKey, a.masterKey);
  assert.notEqual(b.id, a.id);
  assert.notDeepEqual(repositoryIdentity('other secret', 'team-a').masterKey, a.masterKey);
  assert.equal(isIrreducible(a.polynomial), true);
  assert.equal(degree(a.polynomial), 53);
  assert.match(a.id, /^[0-9a-f]{64}$/);
  assert.deepEqual([a.masterKey.encrypt.length, a.masterKey.macK.length, a.masterKey.macR.length], [32, 16, 16]);
  assert.notDeepEqual(a.masterKey.macK, a.masterKey.macR);
  // a repository created with it opens with the password alone, and has exactly that key, id and polynomial
  const backend = new MemBackend();
  await Repository.init(backend, 'pw', { ...a, kdf: { N: 1024, r: 8, p: 1 } });
  const repo = await Repository.open(backend, 'pw');
  const hex = (k: typeof a.masterKey) => [k.encrypt, k.macK, k.macR].map((x) => Buffer.from(x).toString('hex'));
  assert.deepEqual(hex(repo.key), hex(a.masterKey));
  assert.equal(repo.config.id, a.id);
  assert.equal(repo.config.chunkerPolynomial, a.polynomial);
});

/** The location "default" in ferry-system. */
function location(locationSpec: BackupStorageLocationSpec) {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupStorageLocation',
    metadata: { name: 'default', namespace: 'ferry-system' },
    spec: locationSpec,
  };
}

function secret(name: string, data: Record<string, string>) {
  const b64 = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'ferry-system' }, data: b64 };
}

test('repository access reads the location and its Secrets, writes a private CA to a file it later removes', async () => {
  const kube = new MemoryKube();
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  kube.seed(
    location({
      ...spec({ caBundle: Buffer.from(pem).toString('base64') }),
      credential: { name: 'creds', accessKeyIDKey: 'id' },
    }),
    secret('creds', { id: 'AKID', AWS_SECRET_ACCESS_KEY: 'SECRET\n' }),
    secret('repo-pass', { password: 'location-secret' }),
  );
  const access = await repositoryAccess(kube, 'ferry-system', 'default', 'team-a');
  assert.equal(access.location, 's3:http://127.0.0.1:9000/ferry/backups/prod/team-a');
  assert.equal(access.password, repositoryPassword('location-secret', 'team-a'));
  assert.deepEqual(access.open.s3?.credentials, { accessKeyId: 'AKID', secretAccessKey: 'SECRET' });
  assert.equal(access.open.s3?.pathStyle, true);
  const caFile = access.open.s3!.caFile!;
  assert.equal(readFileSync(caFile, 'utf8'), pem);
  access.dispose();
  assert.equal(existsSync(caFile), false);
});

test('a missing location, Secret or key is named in the error', async () => {
  const kube = new MemoryKube();
  await assert.rejects(
    repositoryAccess(kube, 'ferry-system', 'nope', 'team-a'),
    /BackupStorageLocation "nope" does not exist in namespace ferry-system/,
  );
  kube.seed(location(spec()));
  await assert.rejects(
    repositoryAccess(kube, 'ferry-system', 'default', 'team-a'),
    /credentials Secret "creds" does not exist/,
  );
  kube.seed(
    secret('creds', { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' }),
    secret('repo-pass', { other: 'x' }),
  );
  await assert.rejects(
    repositoryAccess(kube, 'ferry-system', 'default', 'team-a'),
    /repository password Secret "repo-pass" has no key "password"/,
  );
});

test('a step whose Job lacks the location\'s Secrets says where it looked, not just "forbidden"', async () => {
  // as a step account: no Secret is readable through the API (policies/), so a Secret not mounted is an error
  class NoSecrets extends MemoryKube {
    override async get<T extends KubeObject>(key: ObjectKey): Promise<T | undefined> {
      if (key.kind === 'Secret') throw Object.assign(new Error('secrets is forbidden'), { status: 403 });
      return super.get<T>(key);
    }
  }
  const kube = new NoSecrets();
  kube.seed(location(spec()));
  await assert.rejects(
    repositoryAccess(kube, 'ferry-system', 'default', 'team-a'),
    /credentials Secret "creds" is neither mounted at \/ferry\/secrets\/creds\/AWS_ACCESS_KEY_ID nor readable by this account/,
  );
});
