import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { newMasterKey, type MasterKey } from '../../../src/engine/crypto/key.ts';
import { computeMAC } from '../../../src/engine/crypto/mac.ts';
import { CiphertextError, open, seal, sealFramed, sealInto, sealOverhead } from '../../../src/engine/crypto/seal.ts';

const hex = (s: string) => new Uint8Array(Buffer.from(s, 'hex'));

test("opens the known ciphertext from restic's crypto tests", () => {
  const key: MasterKey = {
    encrypt: hex('303e8687b1d7db18421bdc6bb8588ccadac4d59ee87b8ff70c44e635790cafef'),
    macK: hex('ef4d8824cb80b2bcc5fbff8a9b12a42c'),
    macR: hex('cc8d4b948ee0ebfe1d415de921d10353'),
  };
  const sealed = hex(
    '69fb41c62d12def4593bd71757138606338f621aeaeb39da0fe4f99233f8037a54ea63338a813bcf3f75d8c3cc75dddf8750',
  );
  assert.equal(Buffer.from(open(key, sealed)).toString('utf8'), 'Dies ist ein Test!');
});

test('round trips sizes around block and MAC boundaries, up to 1 MiB', () => {
  const key = newMasterKey();
  for (const size of [0, 1, 5, 15, 16, 17, 23, 31, 32, 33, (2 << 18) + 23, 1 << 20]) {
    const plaintext = randomBytes(size);
    const sealed = seal(key, plaintext);
    assert.equal(sealed.length, size + sealOverhead);
    assert.deepEqual(Buffer.from(open(key, sealed)), plaintext);
  }
});

test('the ciphertext part is AES-256-CTR of the plaintext under the stored IV', () => {
  const key = newMasterKey();
  const plaintext = randomBytes(1000);
  const sealed = seal(key, plaintext);
  const keystream = createCipheriv('aes-256-ctr', key.encrypt, sealed.subarray(0, 16)).update(Buffer.alloc(1000));
  const ciphertext = sealed.subarray(16, 1016);
  assert.deepEqual(Buffer.from(ciphertext.map((b, i) => b ^ keystream[i])), plaintext);
});

test('every seal draws a fresh IV, also across refills of the IV pool', () => {
  const key = newMasterKey();
  const ivs = new Set(
    Array.from({ length: 1000 }, () => Buffer.from(seal(key, new Uint8Array(4)).subarray(0, 16)).toString('hex')),
  );
  assert.equal(ivs.size, 1000);
});

// Go's CTR treats the whole 16-byte IV as one big-endian counter; an IV about to wrap its low 64 bits shows
// whether the carry reaches the high half. The expected keystream is built block by block from AES-256-ECB.
test('the CTR counter carries across all 128 bits, as restic (Go) does', () => {
  const key = newMasterKey();
  const iv = hex('0102030405060708fffffffffffffffe');
  const counters = [
    '0102030405060708fffffffffffffffe',
    '0102030405060708ffffffffffffffff',
    '01020304050607090000000000000000',
  ];
  const ecb = createCipheriv('aes-256-ecb', key.encrypt, null).setAutoPadding(false);
  const keystream = Buffer.concat(counters.map((c) => ecb.update(hex(c))));
  const plaintext = randomBytes(48);
  const ciphertext = plaintext.map((b, i) => b ^ keystream[i]);
  const sealed = Buffer.concat([iv, ciphertext, computeMAC(key, iv, ciphertext)]);
  assert.deepEqual(Buffer.from(open(key, sealed)), plaintext);
});

test('a single flipped bit anywhere (IV, ciphertext or MAC) is rejected', () => {
  const key = newMasterKey();
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 3000 }), fc.nat(), fc.integer({ min: 0, max: 7 }), (length, pos, bit) => {
      const sealed = seal(key, randomBytes(length));
      sealed[pos % sealed.length] ^= 1 << bit;
      assert.throws(() => open(key, sealed), CiphertextError);
    }),
    { numRuns: 300 },
  );
});

test('another key, a truncated input and an input shorter than the overhead are rejected', () => {
  const key = newMasterKey();
  const sealed = seal(key, randomBytes(100));
  assert.throws(() => open(newMasterKey(), sealed), CiphertextError);
  assert.throws(() => open(key, sealed.subarray(0, sealed.length - 1)), CiphertextError);
  assert.throws(() => open(key, sealed.subarray(1)), CiphertextError);
  assert.throws(() => open(key, new Uint8Array(sealOverhead - 1)), /shorter than the 32-byte IV and MAC/);
});

test('sealing works on a view into a larger buffer and leaves the input untouched', () => {
  const key = newMasterKey();
  const backing = randomBytes(300);
  const copy = Buffer.from(backing);
  const view = backing.subarray(100, 200);
  assert.deepEqual(Buffer.from(open(key, seal(key, view))), copy.subarray(100, 200));
  assert.deepEqual(backing, copy);
});

test('sealInto seals into a slice of a shared buffer, leaving its neighbours alone, and refuses a wrong size', () => {
  const key = newMasterKey();
  const plaintext = randomBytes(100);
  const shared = new Uint8Array(8 + plaintext.length + sealOverhead + 8).fill(0xaa);
  sealInto(key, plaintext, shared.subarray(8, 8 + plaintext.length + sealOverhead));
  assert.deepEqual(Buffer.from(open(key, shared.subarray(8, shared.length - 8))), plaintext);
  assert.ok(
    shared.subarray(0, 8).every((b) => b === 0xaa) && shared.subarray(shared.length - 8).every((b) => b === 0xaa),
  );
  assert.throws(() => sealInto(key, plaintext, new Uint8Array(plaintext.length + sealOverhead + 1)), RangeError);
});

test('sealFramed seals the bytes between the room for IV and MAC, whatever the room held, into a buffer of its own', () => {
  const key = newMasterKey();
  // both keystream paths (cached ECB up to 2 KiB, OpenSSL's CTR above), block and MAC boundaries
  for (const size of [0, 1, 15, 16, 17, 2000, 2017, 2048, 5000, (1 << 20) + 3]) {
    const plaintext = randomBytes(size);
    const framed = Buffer.concat([Buffer.alloc(16, 0xa5), plaintext, Buffer.alloc(16, 0x5a)]);
    const sealed = sealFramed(key, framed);
    assert.equal(sealed.length, size + sealOverhead);
    assert.notEqual(sealed.buffer, framed.buffer);
    assert.deepEqual(Buffer.from(open(key, sealed)), plaintext, `${size} bytes`);
    // the body is AES-256-CTR from the stored IV, as restic reads it, not from the block before it
    const keystream = createCipheriv('aes-256-ctr', key.encrypt, sealed.subarray(0, 16)).update(Buffer.alloc(size));
    assert.deepEqual(Buffer.from(sealed.subarray(16, 16 + size).map((b, i) => b ^ keystream[i])), plaintext);
    assert.deepEqual(framed.subarray(16, 16 + size), plaintext, 'the input is left as it was');
  }
  assert.throws(() => sealFramed(key, new Uint8Array(31)), /32 bytes of room/);
});
