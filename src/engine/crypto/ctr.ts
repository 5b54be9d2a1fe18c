// AES-256-CTR with the whole 16-byte IV as one big-endian counter, as Go's cipher.NewCTR (and so restic).
// Small inputs build the keystream from the key's cached ECB cipher, avoiding a fresh cipher per message.

import { createCipheriv, createSecretKey, type KeyObject } from 'node:crypto';
import { ecbFor } from './ecb-cache.ts';
import { opensslFor } from './openssl.ts';

// A cipher made from raw key bytes first builds a KeyObject (several times the rest of a small blob's cipher
// set-up); one per key, kept as long as the key bytes live (they are treated as immutable, as in ecbFor).
const keyObjects = new WeakMap<Uint8Array, KeyObject>();

function keyObjectFor(key: Uint8Array): KeyObject {
  let k = keyObjects.get(key);
  if (k === undefined) {
    k = createSecretKey(key);
    keyObjects.set(key, k);
  }
  return k;
}

// Below this the cached-ECB path wins; above it OpenSSL's native CTR does (measured break-even ~4 KiB).
const keystreamLimit = 2048;

/** input XOR keystream(key, iv), in a new buffer of input's length. */
export function aesCTR(key: Uint8Array, iv: Uint8Array, input: Uint8Array): Buffer {
  if (input.length > keystreamLimit) return createCipheriv('aes-256-ctr', keyObjectFor(key), iv).update(input);
  if (input.length === 0) return Buffer.alloc(0);
  const out = ecbFor(key).update(counterBlocks(iv, input.length)).subarray(0, input.length);
  for (let i = 0; i < input.length; i++) out[i] ^= input[i];
  return out;
}

/**
 * `data` XOR keystream(key, iv), written over `data` (no new buffer: allocating one cost more than the cipher), or,
 * short or without Node's OpenSSL at hand, in a new buffer as aesCTR makes. Returns the result.
 */
export function aesCTRInPlace(key: Uint8Array, iv: Uint8Array, data: Uint8Array): Uint8Array {
  const native = data.length > keystreamLimit ? opensslFor(data.length) : undefined;
  if (!native) return aesCTR(key, iv, data);
  native.aesCTRInPlace(key, iv, data);
  return data;
}

/** `out` = `iv` + `blocks`, the 16 bytes read as one big-endian number (wrapping at 2^128, as the counter does). */
export function counterPlus(iv: Uint8Array, blocks: number, out: Uint8Array): void {
  let add = blocks;
  let carry = 0;
  for (let i = 15; i >= 0; i--) {
    const sum = iv[i] + (add % 256) + carry;
    out[i] = sum & 0xff;
    carry = sum >> 8;
    add = Math.floor(add / 256);
  }
}

/** `out` = `iv` - 1, the 16 bytes read as one big-endian number (wrapping below zero, as the counter does). */
export function counterBefore(iv: Uint8Array, out: Uint8Array): void {
  out.set(iv.subarray(0, 16), 0);
  // borrow from the last byte towards the first while a byte was zero
  for (let i = 15; i >= 0 && out[i]-- === 0; i--);
}

/**
 * Counter blocks a message of `length` bytes takes in a run: at least one, so that the next message's IV differs
 * from an empty message's, which is still its MAC's nonce.
 */
export function blocksOf(length: number): number {
  return Math.max(1, Math.ceil(length / 16));
}

/**
 * Several messages through one cipher: message i is XORed with the keystream from counter `iv` + the blocks of the
 * messages before it, exactly as if it were encrypted alone from that counter. A cipher call has a cost beyond its
 * bytes (the context, the output buffer), more than encrypting a 4 KiB blob; a batch of small blobs pays it once.
 * Returns views of one new buffer, one per message.
 */
export function aesCTRRun(key: Uint8Array, iv: Uint8Array, inputs: Uint8Array[]): Uint8Array[] {
  const starts: number[] = [];
  let size = 0;
  for (const input of inputs) {
    starts.push(size);
    size += blocksOf(input.length) * 16;
  }
  // the gaps that pad each message to whole blocks are encrypted too, and their output dropped
  const stream = Buffer.allocUnsafe(size);
  inputs.forEach((input, i) => stream.set(input, starts[i]));
  const out = createCipheriv('aes-256-ctr', keyObjectFor(key), iv).update(stream);
  return inputs.map((input, i) => out.subarray(starts[i], starts[i] + input.length));
}

function counterBlocks(iv: Uint8Array, length: number): Buffer {
  const blocks = Math.ceil(length / 16);
  const counters = Buffer.allocUnsafe(blocks * 16);
  counters.set(iv.subarray(0, 16), 0);
  for (let at = 16; at < counters.length; at += 16) {
    counters.copy(counters, at, at - 16, at);
    // increment with carry, from the last byte towards the first
    for (let i = at + 15; i >= at && ++counters[i] === 256; i--) counters[i] = 0;
  }
  return counters;
}
