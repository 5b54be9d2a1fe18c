// Blob kinds and where a blob lives. A pack's header entry type encodes kind and compression together:
// 0 data, 1 tree, 2 compressed data, 3 compressed tree (format v2; v1 knows only 0 and 1).
import type { ID } from '../ids/id.ts';
import { sealOverhead } from '../crypto/seal.ts';

export type BlobType = 'data' | 'tree';

export interface BlobHandle {
  id: ID;
  type: BlobType;
}

/** A blob's place in a pack. `length` is the stored (encrypted) size; `uncompressedLength` is 0 when stored raw. */
export interface PackedBlob extends BlobHandle {
  offset: number;
  length: number;
  uncompressedLength: number;
}

/** The plaintext length of a stored blob, known from the index without reading it. */
export function plainLength(b: PackedBlob): number {
  return b.uncompressedLength > 0 ? b.uncompressedLength : b.length - sealOverhead;
}

export function entryType(type: BlobType, compressed: boolean): number {
  return (type === 'tree' ? 1 : 0) + (compressed ? 2 : 0);
}

export function decodeEntryType(t: number): { type: BlobType; compressed: boolean } {
  if (t < 0 || t > 3) throw new Error(`unknown pack entry type ${t}`);
  return { type: (t & 1) === 1 ? 'tree' : 'data', compressed: (t & 2) === 2 };
}

/**
 * A blob with its id as the 32 bytes at `at` in `ids`. Visitors get one object, refilled for each blob, so it is
 * valid only during the call: a pack of 100k tiny blobs is encoded without an object or a hex string per blob.
 */
export interface RawBlob {
  ids: Buffer;
  at: number;
  type: BlobType;
  offset: number;
  length: number;
  uncompressedLength: number;
}

/** Blobs in pack order, from an array or a compact table (a pack of tiny files holds over 100k). */
export interface BlobList {
  readonly length: number;
  forEachBlob(fn: (b: RawBlob) => void): void;
}

export function asBlobList(blobs: readonly PackedBlob[] | BlobList): BlobList {
  if (!Array.isArray(blobs)) return blobs as BlobList;
  return {
    length: blobs.length,
    forEachBlob(fn) {
      const raw: RawBlob = { ids: Buffer.alloc(32), at: 0, type: 'data', offset: 0, length: 0, uncompressedLength: 0 };
      for (const b of blobs as readonly PackedBlob[]) {
        raw.ids.write(b.id, 'hex');
        raw.type = b.type;
        raw.offset = b.offset;
        raw.length = b.length;
        raw.uncompressedLength = b.uncompressedLength;
        fn(raw);
      }
    },
  };
}

/** Plaintext size of a blob, as the index and progress reporting need it. */
export function plaintextLength(b: PackedBlob, overhead: number): number {
  return b.uncompressedLength > 0 ? b.uncompressedLength : b.length - overhead;
}
