// Turning a plaintext blob into what a pack stores: zstd (when it pays), then seal. The result is decrypted,
// decompressed and re-hashed before it may enter a pack (restic 0.16.4's lesson: never upload what cannot be read
// back); only the MAC, computed over the same bytes a moment before, is not recomputed.
// Pure and synchronous so worker threads can run it.
import type { MasterKey } from '../crypto/key.ts';
import { hashID } from '../ids/id.ts';
import { decryptSealed, open, sealInto, sealOverhead } from '../crypto/seal.ts';
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
  sealBlobInto(key, id, body, uncompressedLength, sealed);
  return { id, type, sealed, uncompressedLength };
}

/** What a blob stores before sealing: zstd when it pays, otherwise the plaintext (uncompressedLength 0). */
export function blobBody(plain: Uint8Array, compression: boolean): { body: Uint8Array; uncompressedLength: number } {
  if (compression && plain.length > 0 && !looksIncompressible(plain)) {
    const z = compressBlob(plain);
    // incompressible data is stored raw: smaller, and restore skips a pointless decompression
    if (z !== undefined) return { body: z, uncompressedLength: plain.length };
  }
  return { body: plain, uncompressedLength: 0 };
}

/**
 * Seals a blob's body into `out` (exactly `body.length + sealOverhead` bytes) and reads it back, so the small blobs
 * of a batch can be sealed side by side into one buffer.
 */
export function sealBlobInto(key: MasterKey, id: string, body: Uint8Array, uncompressedLength: number, out: Uint8Array): void {
  sealInto(key, body, out);
  verifyPrepared(key, id, out, uncompressedLength);
}

/** A stored blob's plaintext, checked against its id, or why it cannot be trusted. */
export function openVerified(key: MasterKey, sealed: Uint8Array, uncompressedLength: number, id: string): Uint8Array | string {
  let plain: Uint8Array;
  try {
    const body = open(key, sealed);
    plain = uncompressedLength > 0 ? decompressBlob(body, uncompressedLength) : body;
  } catch (err) {
    return (err as Error).message;
  }
  return hashID(plain) === id ? plain : 'its content does not match its id';
}

function verifyPrepared(key: MasterKey, id: string, sealed: Uint8Array, uncompressedLength: number): void {
  // the MAC was computed over these bytes a moment ago; decrypting, decompressing and hashing is the read-back
  const body = decryptSealed(key, sealed);
  const back = uncompressedLength > 0 ? decompressOwnFrame(body, uncompressedLength) : body;
  const got = hashID(back);
  if (got !== id) throw new BlobVerificationError(`blob ${id.slice(0, 8)} did not read back correctly after encryption (got ${got.slice(0, 8)}); refusing to upload it`);
}
