// AES-256-CTR as Go computes it: block i of the keystream is AES(key, IV + i) with IV read as one 128-bit
// big-endian number. The expected keystream here is built independently, with BigInt counters and plain ECB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { aesCTR, aesCTRRun, counterBefore, counterPlus } from '../../../src/engine/crypto/ctr.ts';

function expectedCTR(key: Uint8Array, iv: Uint8Array, input: Uint8Array): Buffer {
  const blocks = Math.ceil(input.length / 16);
  const start = BigInt('0x' + Buffer.from(iv).toString('hex'));
  const counters = Buffer.alloc(blocks * 16);
  for (let b = 0; b < blocks; b++) {
    const c = (start + BigInt(b)) % (1n << 128n);
    counters.write(c.toString(16).padStart(32, '0'), b * 16, 'hex');
  }
  const keystream = createCipheriv('aes-256-ecb', key, null).setAutoPadding(false).update(counters);
  return Buffer.from(input.map((x, i) => x ^ keystream[i]));
}

// IVs whose low bytes are about to overflow, so carries cross bytes, the 64-bit halves and 2^128 itself.
const nearWrap = fc.constantFrom(
  '0102030405060708fffffffffffffff0',
  'ffffffffffffffffffffffffffffffff',
  '000000000000000000000000ffffffff',
);
const anyIV = fc.oneof(
  fc.uint8Array({ minLength: 16, maxLength: 16 }),
  nearWrap.map((h) => new Uint8Array(Buffer.from(h, 'hex'))),
);

test('small inputs (cached-ECB keystream) equal the reference CTR, carries included', () => {
  const key = randomBytes(32);
  fc.assert(
    // the length is drawn explicitly: fast-check's default array sizes stay below a single block
    fc.property(anyIV, fc.integer({ min: 0, max: 2048 }), (iv, length) => {
      const input = randomBytes(length);
      assert.deepEqual(aesCTR(key, iv, input), expectedCTR(key, iv, input));
    }),
    { numRuns: 200 },
  );
});

test('large inputs (native CTR) equal the reference CTR, carries included', () => {
  const key = randomBytes(32);
  for (const h of [
    '0102030405060708fffffffffffffff0',
    'ffffffffffffffffffffffffffffff00',
    randomBytes(16).toString('hex'),
  ]) {
    const iv = Buffer.from(h, 'hex');
    for (const size of [2049, 5000, 70_000]) {
      const input = randomBytes(size);
      assert.deepEqual(aesCTR(key, iv, input), expectedCTR(key, iv, input), `iv ${h}, size ${size}`);
    }
  }
});

test('the result is a new buffer and the input is left as it was', () => {
  const key = randomBytes(32);
  for (const size of [0, 100, 5000]) {
    const input = randomBytes(size);
    const before = Buffer.from(input);
    const out = aesCTR(key, randomBytes(16), input);
    assert.equal(out.length, size);
    assert.deepEqual(input, before);
  }
});

test('counterPlus adds blocks to the IV as one 128-bit number, wrapping at 2^128', () => {
  const out = new Uint8Array(16);
  for (const h of [
    '00000000000000000000000000000000',
    '0102030405060708fffffffffffffff0',
    'ffffffffffffffffffffffffffffffff',
    randomBytes(16).toString('hex'),
  ]) {
    for (const blocks of [0, 1, 255, 256, 65_537, 2 ** 40 + 3]) {
      counterPlus(Buffer.from(h, 'hex'), blocks, out);
      const want = (BigInt('0x' + h) + BigInt(blocks)) % (1n << 128n);
      assert.equal(Buffer.from(out).toString('hex'), want.toString(16).padStart(32, '0'), `${h} + ${blocks}`);
    }
  }
});

test('aesCTRRun gives each message what CTR alone from its own counter gives: iv plus the blocks before it', () => {
  const key = randomBytes(32);
  fc.assert(
    fc.property(anyIV, fc.array(fc.integer({ min: 0, max: 5000 }), { minLength: 1, maxLength: 12 }), (iv, lengths) => {
      const inputs = lengths.map((n) => randomBytes(n));
      const outs = aesCTRRun(key, iv, inputs);
      let blocks = 0;
      const counter = new Uint8Array(16);
      inputs.forEach((input, i) => {
        counterPlus(iv, blocks, counter);
        assert.deepEqual(
          Buffer.from(outs[i]),
          expectedCTR(key, counter, input),
          `message ${i} of ${lengths.join(',')}`,
        );
        blocks += Math.max(1, Math.ceil(input.length / 16));
      });
    }),
    { numRuns: 100 },
  );
});

test('counterBefore is the block before the IV, borrowing across all 128 bits and wrapping below zero', () => {
  const cases = [
    ['00000000000000000000000000000001', '00000000000000000000000000000000'],
    ['0102030405060708090a0b0c0d0e0f00', '0102030405060708090a0b0c0d0e0eff'],
    ['01020304050607080000000000000000', '0102030405060707ffffffffffffffff'],
    ['00000000000000000000000000000000', 'ffffffffffffffffffffffffffffffff'],
  ];
  for (const [iv, before] of cases) {
    const out = new Uint8Array(16);
    counterBefore(Buffer.from(iv, 'hex'), out);
    assert.equal(Buffer.from(out).toString('hex'), before, iv);
    // and one block on from it is the IV again
    counterPlus(out, 1, out);
    assert.equal(Buffer.from(out).toString('hex'), iv);
  }
});
