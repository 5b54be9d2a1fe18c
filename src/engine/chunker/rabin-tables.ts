// Lookup tables that turn one step of the rolling Rabin fingerprint into XORs.
// The fingerprint of a window b_0..b_63 is the polynomial sum(b_i * x^(8*(63-i))) mod P. Sliding the window by one
// byte multiplies it by x^8, adds the new byte and subtracts the leaving one:
//  - out[b] = b*x^504 mod P is what the leaving byte b contributes, so XOR-ing it removes it.
//  - after the shift, the digest's top byte b sits at x^k..x^(k+7) (k = degree of P); XOR-ing
//    mod[b] = b*x^k mod P xor b*x^k clears it and adds its remainder in one go.
import { degree } from './polynomial.ts';
import type { Polynomial } from './polynomial.ts';

export const windowSize = 64;

const uint64Mask = (1n << 64n) - 1n;

/** r*x mod P, for r already reduced */
function timesX(r: bigint, pol: Polynomial, top: bigint): bigint {
  r <<= 1n;
  return r & top ? r ^ pol : r;
}

/** b*x^power mod P for every byte b; with `cancel`, XOR-ed with b*x^power itself (cut to 64 bits), so that one XOR
 *  both removes b from where a shift left it and adds its remainder. */
export function byteTable(pol: Polynomial, power: number, cancel: boolean): BigUint64Array {
  const top = 1n << BigInt(degree(pol));
  let remainder = 1n;
  for (let i = 0; i < power; i++) remainder = timesX(remainder, pol, top);
  // every entry is linear in b, so the values of the 8 single bits give all 256 entries by XOR
  const bitValues: bigint[] = [];
  for (let bit = 0; bit < 8; bit++, remainder = timesX(remainder, pol, top)) {
    bitValues.push(cancel ? remainder ^ ((1n << BigInt(power + bit)) & uint64Mask) : remainder);
  }
  const table = new BigUint64Array(256);
  for (let b = 1; b < 256; b++) {
    const lowestBit = 31 - Math.clz32(b & -b);
    table[b] = table[b & (b - 1)] ^ bitValues[lowestBit];
  }
  return table;
}

/** out[b]: the fingerprint of b followed by 63 zero bytes */
export function outTable(pol: Polynomial): BigUint64Array {
  return byteTable(pol, 8 * (windowSize - 1), false);
}

/** mod[b]: reduces the byte a one-byte shift pushed above the degree */
export function modTable(pol: Polynomial): BigUint64Array {
  return byteTable(pol, degree(pol), true);
}
