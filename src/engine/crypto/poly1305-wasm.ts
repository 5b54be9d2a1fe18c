// Poly1305 through the WebAssembly kernel in poly1305.wat: several times the pure-JS speed.
// One instance per thread (module state is per isolate), so worker threads each get their own.

import { poly1305WasmBase64 } from './poly1305-wasm-bytes.ts';
import { compileBase64, instantiate } from '../wasm/module.ts';

interface Kernel {
  memory: { buffer: ArrayBuffer };
  init(keyAt: number): void;
  blocks(at: number, len: number, hibit: number): void;
  finish(outAt: number): void;
}

const kernel = instantiate<Kernel>(compileBase64(poly1305WasmBase64));
// Fixed layout inside the kernel's two 64 KiB pages: key, tag, padded last block, then a window for message bytes.
const mem = new Uint8Array(kernel.memory.buffer);
const keyAt = 0;
const tagAt = 32;
const tailAt = 48;
const windowAt = 1024;
const windowSize = 64 * 1024;
const messageBit = 1 << 24;

export function poly1305Wasm(msg: Uint8Array, oneTimeKey: Uint8Array): Uint8Array {
  mem.set(oneTimeKey.subarray(0, 32), keyAt);
  kernel.init(keyAt);
  const whole = msg.length - (msg.length % 16);
  for (let off = 0; off < whole; off += windowSize) {
    const n = Math.min(windowSize, whole - off);
    mem.set(msg.subarray(off, off + n), windowAt);
    kernel.blocks(windowAt, n, messageBit);
  }
  const rest = msg.length - whole;
  if (rest > 0) {
    // A short last block is padded with a single 1 byte and zeros instead of the 2^128 bit.
    mem.fill(0, tailAt, tailAt + 16);
    mem.set(msg.subarray(whole), tailAt);
    mem[tailAt + rest] = 1;
    kernel.blocks(tailAt, 16, 0);
  }
  kernel.finish(tagAt);
  mem.fill(0, keyAt, keyAt + 32);
  return mem.slice(tagAt, tagAt + 16);
}
