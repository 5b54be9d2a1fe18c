// Turning a plaintext blob into what a pack stores: zstd (when it pays), then seal. The result is decrypted,
// decompressed and re-hashed before it may enter a pack (restic 0.16.4's lesson: never upload what cannot be read
// back); only the MAC, computed over the same bytes a moment before, is not recomputed.
// Pure and synchronous so worker threads can run it.
import type { MasterKey } from '../crypto/key.ts';
import { hashID } from '../ids/id.ts';
import { decryptSealed, decryptSealedMany, open, openMany, sealInto, sealManyInto, sealOverhead } from '../crypto/seal.ts';
import { compressBlob, decompressBlob, decompressOwnFrame } from './blob-zstd.ts';
import type { BlobType } from './blob.ts';
import { looksIncompressible } from './incompressible.ts';

export interface PreparedBlob {
  id: string;
  type: BlobType;
  sealed: Uint8Array;
  /** 0 when stored uncompressed */
  uncompressedLength: number;
}

export class BlobVerificationError extends Error {}

export function prepareBlob(key: MasterKey, type: BlobType, id: string, plain: Uint8Array, compression: boolean): PreparedBlob {
  const { body, uncompressedLength } = blobBody(plain, compression);
  const sealed = Buffer.allocUnsafe(body.length + sealOverhead);
  sealInto(key, body, sealed);
  verifyPrepared(key, id, decryptSealed(key, sealed), uncompressedLength);
  return { id, type, sealed, uncompressedLength };
}

/** What a blob stores before sealing: zstd when it pays, otherwise the plaintext (uncompressedLength 0). */
export function blobBody(plain: Uint8Array, compression: boolean): Omit<BlobBody, 'id'> {
  if (compression && plain.length > 0 && !looksIncompressible(plain)) {
    const z = compressBlob(plain);
    // incompressible data is stored raw: smaller, and restore skips a pointless decompression
    if (z !== undefined) return { body: z, uncompressedLength: plain.length };
  }
  return { body: plain, uncompressedLength: 0 };
}

/** A blob's body, ready to seal. */
export interface BlobBody {
  id: string;
  body: Uint8Array;
  uncompressedLength: number;
}

/**
 * Seals a batch of blobs' bodies, each into its `outs[i]` (exactly `body.length + sealOverhead` bytes), with one
 * cipher call for the batch (`sealManyInto`), and reads them back, so the small blobs of a batch can be sealed side
 * by side into one buffer.
 */
export function sealBlobsInto(key: MasterKey, blobs: BlobBody[], outs: Uint8Array[]): void {
  sealManyInto(key, blobs.map((b) => b.body), outs);
  decryptSealedMany(key, outs).forEach((body, i) => verifyPrepared(key, blobs[i].id, body, blobs[i].uncompressedLength));
}

/** A stored blob's plaintext, checked against its id, or why it cannot be trusted. */
export function openVerified(key: MasterKey, sealed: Uint8Array, uncompressedLength: number, id: string): Uint8Array | string {
  let body: Uint8Array;
  try {
    body = open(key, sealed);
  } catch (err) {
    return (err as Error).message;
  }
  return verifiedBody(body, uncompressedLength, id);
}

export interface StoredBlob {
  sealed: Uint8Array;
  uncompressedLength: number;
  id: string;
}

/**
 * `openVerified` for blobs opened together: those ferry sealed as one batch are decrypted with one cipher call
 * (`openMany`). A raw blob's plaintext is a view of a buffer its run shares, for the caller to use before the next.
 */
export function openVerifiedMany(key: MasterKey, blobs: StoredBlob[]): (Uint8Array | string)[] {
  return openMany(key, blobs.map((b) => b.sealed)).map((body, i) => (body instanceof Error ? body.message : verifiedBody(body, blobs[i].uncompressedLength, blobs[i].id)));
}

function verifiedBody(body: Uint8Array, uncompressedLength: number, id: string): Uint8Array | string {
  let plain: Uint8Array;
  try {
    plain = uncompressedLength > 0 ? decompressBlob(body, uncompressedLength) : body;
  } catch (err) {
    return (err as Error).message;
  }
  return hashID(plain) === id ? plain : 'its content does not match its id';
}

/** The read-back of a blob just sealed: its body decrypted again (the MAC, computed a moment ago, is not), decompressed and hashed. */
function verifyPrepared(key: MasterKey, id: string, body: Uint8Array, uncompressedLength: number): void {
  const back = uncompressedLength > 0 ? decompressOwnFrame(body, uncompressedLength) : body;
  const got = hashID(back);
  if (got !== id) throw new BlobVerificationError(`blob ${id.slice(0, 8)} did not read back correctly after encryption (got ${got.slice(0, 8)}); refusing to upload it`);
}
