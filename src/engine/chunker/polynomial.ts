// Polynomials over GF(2), the field restic's chunker fingerprints in. Bit i of the number is the coefficient of x^i,
// so XOR is addition. None of this is on the data path (the chunker only needs its tables), so bigint keeps it plain.
import { randomBytes } from 'node:crypto';

export type Polynomial = bigint;

/** Degree restic gives every repository polynomial: the largest prime below 64 - 8, so a digest shifted left by
 *  one byte still fits in 64 bits. */
export const polynomialDegree = 53;

const maxRandomTries = 1_000_000;
const uint64Limit = 1n << 64n;

/** Degree of `p`, -1 for the zero polynomial. */
export function degree(p: Polynomial): number {
  return p === 0n ? -1 : p.toString(2).length - 1;
}

/** Remainder of `x` divided by `p`. */
export function polyMod(x: Polynomial, p: Polynomial): Polynomial {
  const dp = degree(p);
  if (dp < 0) throw new Error('Cannot reduce modulo the zero polynomial.');
  for (let dx = degree(x); dx >= dp; dx = degree(x)) x ^= p << BigInt(dx - dp);
  return x;
}

/** `a * b mod p`, multiplying by shift-and-add so every partial result stays below `p`'s degree. */
export function polyMulMod(a: Polynomial, b: Polynomial, p: Polynomial): Polynomial {
  const top = 1n << BigInt(degree(p));
  let result = 0n;
  for (a = polyMod(a, p); b !== 0n; b >>= 1n) {
    if (b & 1n) result ^= a;
    a <<= 1n;
    if (a & top) a ^= p;
  }
  return result;
}

function polyGcd(a: Polynomial, b: Polynomial): Polynomial {
  while (b !== 0n) [a, b] = [b, polyMod(a, b)];
  return a;
}

/** Ben-Or's test: `p` of degree d is irreducible iff gcd(p, x^(2^i) - x) = 1 for every i up to d/2, since a factor
 *  of degree i would divide x^(2^i) - x. Constants are neither irreducible nor usable, so they answer false. */
export function isIrreducible(p: Polynomial): boolean {
  const d = degree(p);
  if (d < 1 || p >= uint64Limit) return false;
  const x = 2n;
  let xToTwoToI = x;
  for (let i = 1; i <= d / 2; i++) {
    xToTwoToI = polyMulMod(xToTwoToI, xToTwoToI, p);
    if (polyGcd(p, xToTwoToI ^ x) !== 1n) return false;
  }
  return true;
}

/** restic's DerivePolynomial: read 8 little-endian random bytes, keep bits 0..53, force x^53 and 1 (degree 53, not
 *  divisible by x), and retry until irreducible. Fed the same bytes, it picks the same polynomial as restic. */
export function derivePolynomial(readRandom: (length: number) => Uint8Array, maxTries = maxRandomTries): Polynomial {
  const keep = (1n << BigInt(polynomialDegree + 1)) - 1n;
  const force = (1n << BigInt(polynomialDegree)) | 1n;
  for (let i = 0; i < maxTries; i++) {
    const bytes = readRandom(8);
    const candidate = (Buffer.from(bytes.buffer, bytes.byteOffset, 8).readBigUInt64LE() & keep) | force;
    if (isIrreducible(candidate)) return candidate;
  }
  throw new Error(`No irreducible polynomial found in ${maxTries} random tries; the random source looks broken.`);
}

/** A fresh repository polynomial: random, degree 53, irreducible (about one candidate in 27 is). */
export function randomPolynomial(): Polynomial {
  return derivePolynomial((length) => randomBytes(length));
}

/** Parses the hex form restic writes as `chunker_polynomial` in the repository config (no 0x prefix, any case). */
export function parsePolynomial(hex: string): Polynomial {
  if (!/^[0-9a-f]+$/i.test(hex)) throw new Error(`Chunker polynomial "${hex}" is not a hexadecimal number.`);
  const p = BigInt(`0x${hex}`);
  if (p >= uint64Limit) throw new Error(`Chunker polynomial "${hex}" does not fit in 64 bits.`);
  return p;
}

/** The config form of `p`: lowercase hex without prefix or leading zeros, as restic writes it. */
export function formatPolynomial(p: Polynomial): string {
  if (p < 0n || p >= uint64Limit) throw new Error(`Chunker polynomial ${p} is outside the unsigned 64-bit range.`);
  return p.toString(16);
}
