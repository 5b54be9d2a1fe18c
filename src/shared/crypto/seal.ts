// Authenticated encryption of every repository file and blob: IV(16) || AES-256-CTR(plaintext) || MAC(16).
// Sync and self-contained so worker threads can call it directly on the data path.

import { randomFillSync } from 'node:crypto';
import { aesCTR } from './ctr.ts';
import type { MasterKey } from './key.ts';
import { computeMAC, ivSize, macMatches, macSize } from './mac.ts';

export const sealOverhead = ivSize + macSize;

/** The data was not produced by this key, or was altered since: the MAC does not match. */
export class CiphertextError extends Error {
  override name = 'CiphertextError';
}

// IVs are drawn from the CSPRNG a few hundred at a time: one call per blob cost more than sealing a small blob.
// Each is used once; the pool is per thread, so worker threads never share one.
const ivPool = Buffer.allocUnsafe(256 * ivSize);
let ivNext = ivPool.length;

function freshIV(out: Uint8Array): Uint8Array {
  if (ivNext === ivPool.length) {
    randomFillSync(ivPool);
    ivNext = 0;
  }
  out.set(ivPool.subarray(ivNext, ivNext + ivSize), 0);
  ivNext += ivSize;
  return out.subarray(0, ivSize);
}

export function seal(key: MasterKey, plaintext: Uint8Array): Uint8Array {
  const out = Buffer.allocUnsafe(plaintext.length + sealOverhead);
  sealInto(key, plaintext, out);
  return out;
}

/**
 * Seals into `out`, which must be exactly `plaintext.length + sealOverhead` bytes: many small blobs can then share
 * one buffer that moves between threads whole.
 */
export function sealInto(key: MasterKey, plaintext: Uint8Array, out: Uint8Array): void {
  if (out.length !== plaintext.length + sealOverhead) {
    throw new RangeError(`a sealed ${plaintext.length}-byte plaintext takes ${plaintext.length + sealOverhead} bytes, not ${out.length}`);
  }
  const iv = freshIV(out);
  const ciphertext = out.subarray(ivSize, ivSize + plaintext.length);
  ciphertext.set(aesCTR(key.encrypt, iv, plaintext));
  out.set(computeMAC(key, iv, ciphertext), ivSize + plaintext.length);
}

/** Verifies before decrypting, so a forged or damaged input never yields plaintext. */
export function open(key: MasterKey, sealed: Uint8Array): Uint8Array {
  if (sealed.length < sealOverhead) {
    throw new CiphertextError(`Ciphertext of ${sealed.length} bytes is shorter than the ${sealOverhead}-byte IV and MAC.`);
  }
  const iv = sealed.subarray(0, ivSize);
  const ciphertext = sealed.subarray(ivSize, sealed.length - macSize);
  const tag = sealed.subarray(sealed.length - macSize);
  if (!macMatches(key, iv, ciphertext, tag)) {
    throw new CiphertextError('Ciphertext verification failed: wrong key or corrupted data.');
  }
  return aesCTR(key.encrypt, iv, ciphertext);
}

/**
 * Decrypts without checking the MAC: only for reading back what this process has just sealed, whose MAC was
 * computed over these very bytes. Anything read from storage goes through `open`.
 */
export function decryptSealed(key: MasterKey, sealed: Uint8Array): Uint8Array {
  if (sealed.length < sealOverhead) throw new CiphertextError(`Ciphertext of ${sealed.length} bytes is shorter than the ${sealOverhead}-byte IV and MAC.`);
  return aesCTR(key.encrypt, sealed.subarray(0, ivSize), sealed.subarray(ivSize, sealed.length - macSize));
}
