// The rolling fingerprint in WebAssembly (wasm/rabin.wat), where 64-bit integers make it a few plain instructions.
// Each kernel owns a small instance: tables and window live in its memory, and input is copied in by batches.
import type { RabinKernel } from './rabin-kernel.ts';
import { byteTable, windowSize } from './rabin-tables.ts';
import type { Polynomial } from './polynomial.ts';
import { rabinWasmBase64 } from './wasm/rabin-wasm-bytes.ts';
import { compileBase64, instantiate, type WasmModule } from '../wasm/module.ts';

/** where rabin.wat expects its tables, the window and the batch to hash */
const tablesOffset = 0;
const batchOffset = 16384 + windowSize;

interface RabinExports {
  memory: { buffer: ArrayBuffer };
  reset(): void;
  scan(length: number, check: number): number;
}

let compiled: WasmModule | undefined;

function rabinModule(): WasmModule {
  compiled ??= compileBase64(rabinWasmBase64);
  return compiled;
}

export class WasmRabinKernel implements RabinKernel {
  readonly #exports: RabinExports;
  readonly #memory: Uint8Array;
  readonly #batchCapacity: number;

  constructor(pol: Polynomial) {
    this.#exports = instantiate<RabinExports>(rabinModule());
    // the memory never grows, so this view stays valid
    this.#memory = new Uint8Array(this.#exports.memory.buffer);
    this.#batchCapacity = this.#memory.length - batchOffset;
    const leave = (extraBytes: number): BigUint64Array => byteTable(pol, 8 * (windowSize + extraBytes), false);
    const reduce = (power: number): BigUint64Array => byteTable(pol, power, true);
    // in the order and with the powers rabin.wat lists; 53 is the degree the Chunker insists on
    const tables = [leave(0), leave(1), leave(2), leave(3), reduce(53), reduce(61), reduce(69), reduce(77)];
    tables.forEach((table, n) => {
      new BigUint64Array(this.#exports.memory.buffer, tablesOffset + n * table.byteLength, table.length).set(table);
    });
    this.reset();
  }

  reset(): void {
    this.#exports.reset();
  }

  scan(data: Uint8Array, start: number, end: number, firstCheck: number): number {
    for (let i = start; i < end;) {
      const length = Math.min(this.#batchCapacity, end - i);
      this.#memory.set(data.subarray(i, i + length), batchOffset);
      // clamped so it survives the conversion to i32 whatever the caller passes
      const check = Math.min(Math.max(0, firstCheck - i), length);
      const cut = this.#exports.scan(length, check);
      if (cut >= 0) return i + cut;
      i += length;
    }
    return -1;
  }
}
