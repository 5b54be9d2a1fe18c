import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { newMasterKey } from '../../../src/engine/crypto/key.ts';
import {
  createKeyFile,
  InvalidKeyFileError,
  openKeyFile,
  parseKeyFile,
  WrongPasswordError,
} from '../../../src/engine/crypto/keyfile.ts';
import { open, seal } from '../../../src/engine/crypto/seal.ts';

const cheap = { N: 1024, r: 8, p: 1 };
const meta = { username: 'alice', hostname: 'node-1', created: new Date('2024-05-06T07:08:09.123Z') };

test('a key file opens with its password and yields the same master key', async () => {
  const key = newMasterKey();
  const { bytes } = await createKeyFile('s3cret', key, meta, cheap);
  const opened = await openKeyFile(bytes, 's3cret');
  assert.deepEqual(Buffer.from(opened.encrypt), Buffer.from(key.encrypt));
  assert.deepEqual(Buffer.from(opened.macK), Buffer.from(key.macK));
  assert.deepEqual(Buffer.from(opened.macR), Buffer.from(key.macR));
  assert.deepEqual(Buffer.from(open(opened, seal(key, Buffer.from('hello')))), Buffer.from('hello'));
});

test('a wrong password is reported as WrongPasswordError', async () => {
  const { bytes } = await createKeyFile('s3cret', newMasterKey(), meta, cheap);
  await assert.rejects(openKeyFile(bytes, 's3cret!'), WrongPasswordError);
});

test("the id is the SHA-256 of the bytes, and the JSON carries restic's fields in restic's order", async () => {
  const { id, bytes } = await createKeyFile('pw', newMasterKey(), meta, cheap);
  assert.equal(id, createHash('sha256').update(bytes).digest('hex'));
  const doc = JSON.parse(Buffer.from(bytes).toString('utf8'));
  assert.deepEqual(Object.keys(doc), ['created', 'username', 'hostname', 'kdf', 'N', 'r', 'p', 'salt', 'data']);
  assert.equal(doc.created, '2024-05-06T07:08:09.123Z');
  assert.equal(doc.kdf, 'scrypt');
  assert.equal(Buffer.from(doc.salt, 'base64').length, 64);
  // data = IV || sealed {"mac":{"k":..,"r":..},"encrypt":..}: 3 base64 fields of 16, 16 and 32 bytes.
  assert.equal(
    Buffer.from(doc.data, 'base64').length,
    32 + '{"mac":{"k":"","r":""},"encrypt":""}'.length + 24 + 24 + 44,
  );
  assert.deepEqual(parseKeyFile(bytes).N, 1024);
});

test('two key files for one master key differ (fresh salt and IV)', async () => {
  const key = newMasterKey();
  const a = await createKeyFile('pw', key, meta, cheap);
  const b = await createKeyFile('pw', key, meta, cheap);
  assert.notEqual(a.id, b.id);
});

test('malformed key files are InvalidKeyFileError, naming what is wrong', async () => {
  const good = JSON.parse(Buffer.from((await createKeyFile('pw', newMasterKey(), meta, cheap)).bytes).toString('utf8'));
  const variant = (patch: object) => Buffer.from(JSON.stringify({ ...good, ...patch }));
  await assert.rejects(openKeyFile(Buffer.from('not json'), 'pw'), InvalidKeyFileError);
  await assert.rejects(openKeyFile(variant({ kdf: 'argon2' }), 'pw'), /only scrypt/);
  await assert.rejects(openKeyFile(variant({ N: 1000 }), 'pw'), /power of two/);
  await assert.rejects(openKeyFile(variant({ N: 1 << 30 }), 'pw'), /power of two/);
  await assert.rejects(openKeyFile(variant({ salt: 'AAAA' }), 'pw'), /salt/);
  await assert.rejects(openKeyFile(variant({ data: undefined }), 'pw'), /"data"/);
});

test('creating a key file refuses an all-zero master key', async () => {
  const key = { ...newMasterKey(), macR: new Uint8Array(16) };
  await assert.rejects(createKeyFile('pw', key, meta, cheap), /MAC key r is all zeros/);
});
