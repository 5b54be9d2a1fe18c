import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  degree,
  derivePolynomial,
  formatPolynomial,
  isIrreducible,
  parsePolynomial,
  randomPolynomial,
} from '../../../src/engine/chunker/polynomial.ts';
import type { Polynomial } from '../../../src/engine/chunker/polynomial.ts';
import { refDerivePolynomial, refIrreducible } from '../../support/chunkref.ts';
import { seededBytes, seededReader } from './seeded-bytes.ts';

/** the polynomial restic's own tests use (internal/repository/testing.go) */
const resticTestPolynomial = 0x3da3358b4dc173n;

/** carry-less product, to build polynomials known to be reducible */
function clmul(a: Polynomial, b: Polynomial): Polynomial {
  let product = 0n;
  for (let shift = 0n; b >> shift !== 0n; shift++) if ((b >> shift) & 1n) product ^= a << shift;
  return product;
}

describe('isIrreducible', () => {
  test('accepts restic test polynomial and textbook irreducible polynomials', () => {
    // x^2+x+1, x^3+x+1, x^4+x+1, the AES polynomial x^8+x^4+x^3+x+1, x^8+x^4+x^3+x^2+1
    for (const p of [resticTestPolynomial, 0x7n, 0xbn, 0x13n, 0x11bn, 0x11dn]) {
      assert.equal(isIrreducible(p), true, `0x${p.toString(16)} is irreducible`);
    }
  });

  test('rejects products, squares and constants', () => {
    const reducible = [
      0n,
      1n,
      0x4n, // x^2
      0x5n, // x^2+1 = (x+1)^2
      clmul(0x7n, 0xbn),
      clmul(resticTestPolynomial, 0x3n),
      clmul(0x11bn, 0x11dn),
      resticTestPolynomial ^ 1n, // divisible by x
    ];
    for (const p of reducible) assert.equal(isIrreducible(p), false, `0x${p.toString(16)} is reducible`);
  });

  test('agrees with restic on random degree-53 candidates', async () => {
    const random = seededBytes('irreducible candidates', 8 * 300);
    const candidates: Polynomial[] = [];
    for (let i = 0; i < 300; i++) {
      const raw = Buffer.from(random.buffer, random.byteOffset + 8 * i, 8).readBigUInt64LE();
      candidates.push((raw & ((1n << 54n) - 1n)) | (1n << 53n) | 1n);
    }
    const expected = await refIrreducible(candidates);
    assert.deepEqual(candidates.map(isIrreducible), expected);
    // about one in 27 candidates is irreducible: make sure both verdicts were exercised
    assert.ok(expected.filter(Boolean).length >= 3);
  });
});

describe('derivePolynomial and randomPolynomial', () => {
  test('pick the same polynomial as restic from the same random bytes', async () => {
    for (const seed of ['derive 1', 'derive 2', 'derive 3', 'derive 4']) {
      const length = 8 * 2000;
      const ours = derivePolynomial(seededReader(seed, length));
      assert.equal(ours, await refDerivePolynomial(seededBytes(seed, length)), `seed ${seed}`);
    }
  });

  test('random polynomials have degree 53, are irreducible by restic too, and differ', async () => {
    const pols = [randomPolynomial(), randomPolynomial(), randomPolynomial()];
    for (const p of pols) assert.equal(degree(p), 53);
    assert.deepEqual(await refIrreducible(pols), [true, true, true]);
    assert.equal(new Set(pols).size, pols.length);
  });

  test('a random source that never yields an irreducible polynomial is reported', () => {
    // all-zero bytes always give x^53 + 1, which x + 1 divides
    assert.throws(() => derivePolynomial((n) => new Uint8Array(n), 1000), /No irreducible polynomial found in 1000/);
  });
});

describe('parsePolynomial and formatPolynomial', () => {
  test('read and write the repository config form', () => {
    assert.equal(parsePolynomial('3da3358b4dc173'), resticTestPolynomial);
    assert.equal(parsePolynomial('3DA3358B4DC173'), resticTestPolynomial);
    assert.equal(formatPolynomial(resticTestPolynomial), '3da3358b4dc173');
    assert.equal(
      JSON.stringify({ chunker_polynomial: formatPolynomial(resticTestPolynomial) }),
      '{"chunker_polynomial":"3da3358b4dc173"}',
    );
  });

  test('round-trip every 64-bit value', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), (p) => parsePolynomial(formatPolynomial(p)) === p),
    );
  });

  test('reject malformed text with a message naming it', () => {
    for (const bad of ['', '0x3da3358b4dc173', '3da3 358b', 'xyz', '-5', '1ffffffffffffffff']) {
      assert.throws(
        () => parsePolynomial(bad),
        (err: Error) => err.message.includes(`"${bad}"`),
        `"${bad}"`,
      );
    }
    assert.throws(() => formatPolynomial(-1n), /outside the unsigned 64-bit range/);
  });
});
