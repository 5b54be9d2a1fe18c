// The rolling fingerprint in plain JavaScript: the reference kernel, and the fallback without WebAssembly.
// Degree-53 digests do not fit 32-bit integer ops, so the digest lives in two halves: hi (bits 32..52), lo (0..31).
import { splitMask } from './rabin-kernel.ts';
import type { RabinKernel } from './rabin-kernel.ts';
import { modTable, outTable, windowSize } from './rabin-tables.ts';
import type { Polynomial } from './polynomial.ts';

/** shift that brings bit 45 (degree 53 minus 8) of hi:lo down to bit 0, i.e. the digest's top byte */
const topByteShift = 53 - 8 - 32;

interface HalfTables {
  outHi: Int32Array;
  outLo: Int32Array;
  modHi: Int32Array;
  modLo: Int32Array;
}

/** Int32 halves, so V8 keeps every value a small integer */
function halves(table: BigUint64Array, shift: bigint): Int32Array {
  return Int32Array.from(table, (v) => Number(BigInt.asIntN(32, v >> shift)));
}

export class JsRabinKernel implements RabinKernel {
  readonly #tables: HalfTables;
  #hi = 0;
  #lo = 0;
  /** the 64 bytes before the next byte to hash, oldest first */
  readonly #window = new Uint8Array(windowSize);

  constructor(pol: Polynomial) {
    const out = outTable(pol);
    const mod = modTable(pol);
    this.#tables = { outHi: halves(out, 32n), outLo: halves(out, 0n), modHi: halves(mod, 32n), modLo: halves(mod, 0n) };
  }

  reset(): void {
    this.#hi = 0;
    this.#lo = 0;
    this.#window.fill(0);
  }

  scan(data: Uint8Array, start: number, end: number, firstCheck: number): number {
    // the first 64 bytes push out bytes held in the window; after that the leaving byte is data[i - 64]
    const headEnd = Math.min(end, start + windowSize);
    const cut = this.#roll(data, start, headEnd, this.#window, -start, firstCheck);
    if (cut >= 0) return cut;
    const cutAfterHead = this.#roll(data, headEnd, end, data, -windowSize, firstCheck);
    if (cutAfterHead >= 0) return cutAfterHead;
    this.#keepWindow(data, start, end);
    return -1;
  }

  #roll(
    data: Uint8Array,
    from: number,
    to: number,
    leaving: Uint8Array,
    leavingDelta: number,
    firstCheck: number,
  ): number {
    const { outHi, outLo, modHi, modLo } = this.#tables;
    let hi = this.#hi;
    let lo = this.#lo;
    for (let i = from; i < to; i++) {
      const out = leaving[i + leavingDelta];
      hi ^= outHi[out];
      lo ^= outLo[out];
      const top = hi >>> topByteShift;
      hi = ((hi << 8) | (lo >>> 24)) ^ modHi[top];
      lo = ((lo << 8) | data[i]) ^ modLo[top];
      if ((lo & splitMask) === 0 && i >= firstCheck) return i + 1;
    }
    this.#hi = hi;
    this.#lo = lo;
    return -1;
  }

  #keepWindow(data: Uint8Array, start: number, end: number): void {
    const fresh = end - start;
    if (fresh >= windowSize) {
      this.#window.set(data.subarray(end - windowSize, end));
    } else {
      this.#window.copyWithin(0, fresh);
      this.#window.set(data.subarray(start, end), windowSize - fresh);
    }
  }
}
