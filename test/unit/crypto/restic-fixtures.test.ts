// Bytes written by the real restic (fixtures/generate.ts; version in fixtures/restic-version.txt):
// its key file opens with its password, and the master key inside opens its config and its data pack.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openKeyFile, parseKeyFile, WrongPasswordError } from '../../../src/engine/crypto/keyfile.ts';
import { open } from '../../../src/engine/crypto/seal.ts';
import { fixtureFileContent, fixturePassword } from './fixtures/restic-fixture.ts';

const fixture = (name: string) => readFileSync(join(import.meta.dirname, 'fixtures', name));
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const keyFile = fixture('restic-key.json');
const masterKey = openKeyFile(keyFile, fixturePassword);

test("restic's key file is scrypt with a 64-byte salt and opens with its password", async () => {
  const meta = parseKeyFile(keyFile);
  assert.equal(meta.kdf, 'scrypt');
  assert.equal(Buffer.from(meta.salt, 'base64').length, 64);
  const key = await masterKey;
  assert.equal(key.encrypt.length, 32);
  assert.equal(key.macK.length, 16);
  assert.equal(key.macR.length, 16);
});

test("restic's key file rejects another password as WrongPasswordError", async () => {
  await assert.rejects(openKeyFile(keyFile, fixturePassword + ' '), WrongPasswordError);
});

test("the master key opens restic's config to what `restic cat config` printed", async () => {
  const config = JSON.parse(Buffer.from(open(await masterKey, fixture('restic-config.bin'))).toString('utf8'));
  assert.deepEqual(config, JSON.parse(fixture('restic-config.json').toString('utf8')));
  assert.equal(config.version, 2);
});

test("the master key opens restic's pack header and its data blob, whose SHA-256 the header names", async () => {
  const key = await masterKey;
  const pack = fixture('restic-data-pack.bin');
  const headerLength = pack.readUInt32LE(pack.length - 4);
  const header = Buffer.from(open(key, pack.subarray(pack.length - 4 - headerLength, pack.length - 4)));
  // one uncompressed data blob: type 0, encrypted length, plaintext SHA-256
  assert.equal(header.length, 1 + 4 + 32);
  assert.equal(header[0], 0);
  const blobLength = header.readUInt32LE(1);
  const blob = Buffer.from(open(key, pack.subarray(0, blobLength)));
  assert.deepEqual(blob, fixtureFileContent());
  assert.equal(sha256(blob), header.subarray(5, 37).toString('hex'));
});
