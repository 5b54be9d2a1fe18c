// Turning a plaintext blob into what a pack stores: zstd (when it pays), then seal. The result is decrypted,
// decompressed and re-hashed before it may enter a pack (restic 0.16.4's lesson: never upload what cannot be read
// back); only the MAC, computed over the same bytes a moment before, is not recomputed.
// Pure and synchronous so worker threads can run it.
import { createHash } from 'node:crypto';
import type { MasterKey } from '../crypto/key.ts';
import { decryptSealed, open, seal } from '../crypto/seal.ts';
import { compress, decompress } from '../compress/zstd.ts';
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
  let body = plain;
  let uncompressedLength = 0;
  if (compression && plain.length > 0 && !looksIncompressible(plain)) {
    const z = compress(plain);
    // incompressible data is stored raw: smaller, and restore skips a pointless decompression
    if (z.length < plain.length) {
      body = z;
      uncompressedLength = plain.length;
    }
  }
  const sealed = seal(key, body);
  verifyPrepared(key, id, sealed, uncompressedLength);
  return { id, type, sealed, uncompressedLength };
}

export function openBlob(key: MasterKey, sealed: Uint8Array, uncompressedLength: number): Uint8Array {
  const body = open(key, sealed);
  return uncompressedLength > 0 ? decompress(body, uncompressedLength) : body;
}

function verifyPrepared(key: MasterKey, id: string, sealed: Uint8Array, uncompressedLength: number): void {
  // the MAC was computed over these bytes a moment ago; decrypting, decompressing and hashing is the read-back
  const body = decryptSealed(key, sealed);
  const back = uncompressedLength > 0 ? decompress(body, uncompressedLength) : body;
  const got = createHash('sha256').update(back).digest('hex');
  if (got !== id) throw new BlobVerificationError(`blob ${id.slice(0, 8)} did not read back correctly after encryption (got ${got.slice(0, 8)}); refusing to upload it`);
}
