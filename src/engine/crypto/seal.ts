// Authenticated encryption of every repository file and blob: IV(16) || AES-256-CTR(plaintext) || MAC(16).
// Sync and self-contained so worker threads can call it directly on the data path.

import { randomFillSync } from 'node:crypto';
import { aesCTR, aesCTRInPlace, aesCTRRun, blocksOf, counterBefore, counterPlus } from './ctr.ts';
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
  checkRoom(plaintext, out);
  const iv = freshIV(out);
  const ciphertext = out.subarray(ivSize, ivSize + plaintext.length);
  ciphertext.set(aesCTR(key.encrypt, iv, plaintext));
  out.set(computeMAC(key, iv, ciphertext), ivSize + plaintext.length);
}

const ivScratch = new Uint8Array(ivSize);
const blockBefore = new Uint8Array(ivSize);

/**
 * Seals a plaintext that already lies between room for its IV and its MAC: `framed` is `ivSize` spare bytes, the
 * plaintext, `macSize` spare bytes. Returns the sealed blob in a buffer of its own, which is the cipher's output:
 * the counter starts one block before the IV, so the spare block in front takes that block's keystream and the
 * plaintext the IV's, exactly as `sealInto` encrypts it; the IV and the MAC then overwrite what the spare bytes
 * became, which nothing reads. A separate output buffer would cost another blob-sized buffer and a copy.
 */
export function sealFramed(key: MasterKey, framed: Uint8Array): Uint8Array {
  if (framed.length < sealOverhead)
    throw new RangeError(`a framed plaintext has ${sealOverhead} bytes of room around it, not ${framed.length} in all`);
  const length = framed.length - sealOverhead;
  const iv = freshIV(ivScratch);
  counterBefore(iv, blockBefore);
  const out = aesCTR(key.encrypt, blockBefore, framed);
  out.set(iv, 0);
  out.set(computeMAC(key, iv, out.subarray(ivSize, ivSize + length)), ivSize + length);
  return out;
}

/**
 * Seals `plaintexts[i]` into `outs[i]` (each exactly `sealOverhead` bytes longer) with one cipher call for all: one
 * random IV starts the batch and each blob's IV is the counter where the blob before it ended, so no counter block
 * is used twice, as with one message as long as the batch. Every blob still carries its own IV, from which any
 * reader decrypts it alone, and its own MAC key (Poly1305-AES asks for unique nonces, not random ones).
 */
export function sealManyInto(key: MasterKey, plaintexts: Uint8Array[], outs: Uint8Array[]): void {
  if (plaintexts.length === 0) return;
  plaintexts.forEach((p, i) => checkRoom(p, outs[i]));
  const first = freshIV(outs[0]);
  let blocks = 0;
  plaintexts.forEach((p, i) => {
    counterPlus(first, blocks, outs[i]);
    blocks += blocksOf(p.length);
  });
  const ciphertexts = aesCTRRun(key.encrypt, first, plaintexts);
  ciphertexts.forEach((ciphertext, i) => {
    const out = outs[i];
    out.set(ciphertext, ivSize);
    out.set(
      computeMAC(key, out.subarray(0, ivSize), out.subarray(ivSize, ivSize + ciphertext.length)),
      ivSize + ciphertext.length,
    );
  });
}

/**
 * `decryptSealed` for a batch: blobs whose IVs continue each other's counters (as `sealManyInto` made them) are
 * decrypted together, each from its own IV. Returns the plaintexts in order (views of new buffers).
 */
export function decryptSealedMany(key: MasterKey, sealed: Uint8Array[]): Uint8Array[] {
  const plaintexts: Uint8Array[] = [];
  const next = new Uint8Array(ivSize);
  let run: Uint8Array[] = [];
  let runIV: Uint8Array = next;
  for (const s of sealed) {
    checkLength(s);
    const iv = s.subarray(0, ivSize);
    if (run.length > 0 && !sameIV(iv, next)) {
      plaintexts.push(...aesCTRRun(key.encrypt, runIV, run));
      run = [];
    }
    if (run.length === 0) runIV = iv;
    const ciphertext = s.subarray(ivSize, s.length - macSize);
    run.push(ciphertext);
    counterPlus(iv, blocksOf(ciphertext.length), next);
  }
  if (run.length > 0) plaintexts.push(...aesCTRRun(key.encrypt, runIV, run));
  return plaintexts;
}

function checkRoom(plaintext: Uint8Array, out: Uint8Array): void {
  if (out.length !== plaintext.length + sealOverhead) {
    throw new RangeError(
      `a sealed ${plaintext.length}-byte plaintext takes ${plaintext.length + sealOverhead} bytes, not ${out.length}`,
    );
  }
}

function checkLength(sealed: Uint8Array): void {
  if (sealed.length < sealOverhead) {
    throw new CiphertextError(
      `Ciphertext of ${sealed.length} bytes is shorter than the ${sealOverhead}-byte IV and MAC.`,
    );
  }
}

function sameIV(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < ivSize; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Verifies before decrypting, so a forged or damaged input never yields plaintext. `inPlace`: the caller gives up
 * `sealed`, which may be decrypted over (the plaintext is then a view of it).
 */
export function open(key: MasterKey, sealed: Uint8Array, inPlace = false): Uint8Array {
  checkAuthentic(key, sealed);
  if (!inPlace) return decryptSealed(key, sealed);
  return aesCTRInPlace(key.encrypt, sealed.subarray(0, ivSize), sealed.subarray(ivSize, sealed.length - macSize));
}

/**
 * `open` for a batch: every blob's MAC is checked, and the authentic ones are decrypted as `decryptSealedMany` does,
 * a run of continuing IVs (a batch ferry sealed together) with one cipher call. Each result is the plaintext (a view
 * of a buffer shared with its run) or why that blob did not verify.
 */
export function openMany(key: MasterKey, sealed: Uint8Array[]): (Uint8Array | CiphertextError)[] {
  const results: (Uint8Array | CiphertextError)[] = [];
  const authentic: number[] = [];
  sealed.forEach((s, i) => {
    try {
      checkAuthentic(key, s);
      authentic.push(i);
    } catch (err) {
      if (!(err instanceof CiphertextError)) throw err;
      results[i] = err;
    }
  });
  decryptSealedMany(
    key,
    authentic.map((i) => sealed[i]),
  ).forEach((plain, k) => {
    results[authentic[k]] = plain;
  });
  return results;
}

function checkAuthentic(key: MasterKey, sealed: Uint8Array): void {
  checkLength(sealed);
  const ciphertext = sealed.subarray(ivSize, sealed.length - macSize);
  if (!macMatches(key, sealed.subarray(0, ivSize), ciphertext, sealed.subarray(sealed.length - macSize))) {
    throw new CiphertextError('Ciphertext verification failed: wrong key or corrupted data.');
  }
}

/**
 * Decrypts without checking the MAC: only for reading back what this process has just sealed, whose MAC was
 * computed over these very bytes. Anything read from storage goes through `open`.
 */
export function decryptSealed(key: MasterKey, sealed: Uint8Array): Uint8Array {
  checkLength(sealed);
  return aesCTR(key.encrypt, sealed.subarray(0, ivSize), sealed.subarray(ivSize, sealed.length - macSize));
}
