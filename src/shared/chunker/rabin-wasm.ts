// The rolling fingerprint in WebAssembly (wasm/rabin.wat), where 64-bit integers make it a few plain instructions.
// Each kernel owns a small instance: tables and window live in its memory, and input is copied in by batches.
import type { RabinKernel } from './rabin-kernel.ts';
import type { RabinTables } from './rabin-tables.ts';
import { rabinWasmBase64 } from './wasm/rabin-wasm-bytes.ts';

/** where rabin.wat expects the batch to hash */
const batchOffset = 4160;

// the project's TypeScript libs (es2024 + node) do not describe WebAssembly, so the little used here is typed here
/** a compiled module, opaque to us */
type WasmModule = object;
interface WasmApi {
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule) => { exports: unknown };
}
const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;

interface RabinExports {
  memory: { buffer: ArrayBuffer };
  reset(): void;
  scan(length: number, check: number): number;
}

let compiled: WasmModule | undefined;

function rabinModule(): WasmModule {
  compiled ??= new wasm.Module(Buffer.from(rabinWasmBase64, 'base64'));
  return compiled;
}

export class WasmRabinKernel implements RabinKernel {
  readonly #exports: RabinExports;
  readonly #memory: Uint8Array;
  readonly #batchCapacity: number;

  constructor(tables: RabinTables) {
    this.#exports = new wasm.Instance(rabinModule()).exports as unknown as RabinExports;
    // the memory never grows, so this view stays valid
    this.#memory = new Uint8Array(this.#exports.memory.buffer);
    this.#batchCapacity = this.#memory.length - batchOffset;
    new BigUint64Array(this.#exports.memory.buffer, 0, tables.all64.length).set(tables.all64);
    this.reset();
  }

  reset(): void {
    this.#exports.reset();
  }

  scan(data: Uint8Array, start: number, end: number, firstCheck: number): number {
    for (let i = start; i < end; ) {
      const length = Math.min(this.#batchCapacity, end - i);
      this.#memory.set(data.subarray(i, i + length), batchOffset);
      const cut = this.#exports.scan(length, Math.max(0, firstCheck - i));
      if (cut >= 0) return i + cut;
      i += length;
    }
    return -1;
  }
}
