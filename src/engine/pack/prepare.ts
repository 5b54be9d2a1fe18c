// Turning a plaintext blob into what a pack stores: zstd (when it pays), then seal. The result is decrypted,
// decompressed and re-hashed before it may enter a pack (restic 0.16.4's lesson: never upload what cannot be read
// back); only the MAC, computed over the same bytes a moment before, is not recomputed.
// Pure and synchronous so worker threads can run it.
import type { MasterKey } from '../crypto/key.ts';
import { hashID } from '../ids/id.ts';
import {
  decryptSealed,
  decryptSealedMany,
  open,
  openMany,
  sealFramed,
  sealManyInto,
  sealOverhead,
} from '../crypto/seal.ts';
import { ivSize } from '../crypto/mac.ts';
import { compressBlob, compressBlobInto, decompressBlob, decompressOwnFrame } from './blob-zstd.ts';
import type { BlobType } from './blob.ts';
import { looksIncompressible } from './incompressible.ts';
import { maxChunkSize } from '../chunker/limits.ts';

export interface PreparedBlob {
  id: string;
  type: BlobType;
  sealed: Uint8Array;
  /** 0 when stored uncompressed */
  uncompressedLength: number;
}

export class BlobVerificationError extends Error {}

export function prepareBlob(
  key: MasterKey,
  type: BlobType,
  id: string,
  plain: Uint8Array,
  compression: boolean,
): PreparedBlob {
  const room = frameFor(plain.length);
  const { length, uncompressedLength } = frameBody(plain, compression, room);
  const sealed = sealFramed(key, room.subarray(0, length + sealOverhead));
  verifyPrepared(key, id, decryptSealed(key, sealed), uncompressedLength);
  return { id, type, sealed, uncompressedLength };
}

/**
 * This thread's blob body being sealed, between room for its IV and its MAC (see `sealFramed`). zstd writes its
 * frame straight into it, and the cipher's output is the sealed blob: a chunk then costs one new buffer here where
 * the frame, the ciphertext and the sealed copy cost three, and a backup's workers spent system time faulting in
 * the pages malloc had given back between them. It grows with the blobs up to the largest chunk; a bigger blob
 * (the tree of a huge folder) gets room of its own rather than leaving the thread holding that much.
 */
let framed = Buffer.allocUnsafeSlow(64 << 10);
const keptFrame = maxChunkSize + sealOverhead;

function frameFor(length: number): Buffer {
  const size = length + sealOverhead;
  if (size > keptFrame) return Buffer.allocUnsafe(size);
  if (framed.length < size) framed = Buffer.allocUnsafeSlow(size);
  return framed;
}

/** Puts the blob's body (as `blobBody` chooses it) into `room`; its length, and the plaintext's when compressed. */
function frameBody(
  plain: Uint8Array,
  compression: boolean,
  room: Uint8Array,
): { length: number; uncompressedLength: number } {
  if (worthCompressing(plain, compression)) {
    const length = compressBlobInto(plain, room, ivSize);
    if (length !== undefined) return { length, uncompressedLength: plain.length };
  }
  room.set(plain, ivSize);
  return { length: plain.length, uncompressedLength: 0 };
}

/** What a blob stores before sealing: zstd when it pays, otherwise the plaintext (uncompressedLength 0). */
export function blobBody(plain: Uint8Array, compression: boolean): Omit<BlobBody, 'id'> {
  if (worthCompressing(plain, compression)) {
    const z = compressBlob(plain);
    // incompressible data is stored raw: smaller, and restore skips a pointless decompression
    if (z !== undefined) return { body: z, uncompressedLength: plain.length };
  }
  return { body: plain, uncompressedLength: 0 };
}

function worthCompressing(plain: Uint8Array, compression: boolean): boolean {
  return compression && plain.length > 0 && !looksIncompressible(plain);
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
  sealManyInto(
    key,
    blobs.map((b) => b.body),
    outs,
  );
  decryptSealedMany(key, outs).forEach((body, i) =>
    verifyPrepared(key, blobs[i].id, body, blobs[i].uncompressedLength),
  );
}

/**
 * A stored blob's plaintext, checked against its id, or why it cannot be trusted. `inPlace`: `sealed` is the
 * caller's to give up; it is decrypted over, and an uncompressed blob's plaintext is a view of it.
 */
export function openVerified(
  key: MasterKey,
  sealed: Uint8Array,
  uncompressedLength: number,
  id: string,
  inPlace = false,
): Uint8Array | string {
  let body: Uint8Array;
  try {
    body = open(key, sealed, inPlace);
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
  return openMany(
    key,
    blobs.map((b) => b.sealed),
  ).map((body, i) =>
    body instanceof Error ? body.message : verifiedBody(body, blobs[i].uncompressedLength, blobs[i].id),
  );
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
  if (got !== id)
    throw new BlobVerificationError(
      `blob ${id.slice(0, 8)} did not read back correctly after encryption (got ${got.slice(0, 8)}); refusing to upload it`,
    );
}
