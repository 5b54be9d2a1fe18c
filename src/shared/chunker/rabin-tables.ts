// Lookup tables that turn one step of the rolling Rabin fingerprint into two XORs.
// The fingerprint of a window b_0..b_63 is the polynomial sum(b_i * x^(8*(63-i))) mod P.
//  - out[b]: fingerprint of b followed by 63 zero bytes. XOR-ing it removes the byte leaving the window.
//  - mod[b]: b*x^k mod P, plus b*x^k itself. After the digest is shifted left by a byte, its top byte b sits
//    at x^k..x^(k+7); one XOR with mod[b] clears it and adds its remainder (k = degree of P).
import { degree, polyMod, polyMulMod } from './polynomial.ts';
import type { Polynomial } from './polynomial.ts';

export const windowSize = 64;

export interface RabinTables {
  /** both tables as 64-bit values, out[0..255] then mod[0..255], for the WebAssembly kernel */
  all64: BigUint64Array;
  /** the same values split in 32-bit halves for the plain JavaScript kernel (Int32, so V8 keeps them small ints) */
  outHi: Int32Array;
  outLo: Int32Array;
  modHi: Int32Array;
  modLo: Int32Array;
}

/** Both tables are linear in b, so 8 single-bit values per table give all 256 entries by XOR. */
function linearTable(bitValue: (bit: number) => bigint): bigint[] {
  const table: bigint[] = [0n];
  for (let b = 1; b < 256; b++) {
    const low = 31 - Math.clz32(b & -b);
    table.push(table[b & (b - 1)] ^ bitValue(low));
  }
  return table;
}

export function rabinTables(pol: Polynomial): RabinTables {
  const k = BigInt(degree(pol));
  const xToWindow = polyMod(1n << BigInt(8 * (windowSize - 1)), pol);
  const out = linearTable((bit) => polyMulMod(xToWindow, 1n << BigInt(bit), pol));
  const mod = linearTable((bit) => polyMod(1n << (k + BigInt(bit)), pol) | (1n << (k + BigInt(bit))));
  const all64 = BigUint64Array.from([...out, ...mod]);
  const halves = (values: bigint[], shift: bigint): Int32Array =>
    Int32Array.from(values, (v) => Number(BigInt.asIntN(32, v >> shift)));
  return {
    all64,
    outHi: halves(out, 32n),
    outLo: halves(out, 0n),
    modHi: halves(mod, 32n),
    modLo: halves(mod, 0n),
  };
}
