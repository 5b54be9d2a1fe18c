// Blob kinds and where a blob lives. A pack's header entry type encodes kind and compression together:
// 0 data, 1 tree, 2 compressed data, 3 compressed tree (format v2; v1 knows only 0 and 1).
import type { ID } from '../ids/id.ts';

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

export function entryType(type: BlobType, compressed: boolean): number {
  return (type === 'tree' ? 1 : 0) + (compressed ? 2 : 0);
}

export function decodeEntryType(t: number): { type: BlobType; compressed: boolean } {
  if (t < 0 || t > 3) throw new Error(`unknown pack entry type ${t}`);
  return { type: (t & 1) === 1 ? 'tree' : 'data', compressed: (t & 2) === 2 };
}

/** Blobs in pack order, from an array or a compact table (a pack of tiny files holds over 100k). */
export type BlobList = Iterable<PackedBlob> & { readonly length: number };

/** Plaintext size of a blob, as the index and progress reporting need it. */
export function plaintextLength(b: PackedBlob, overhead: number): number {
  return b.uncompressedLength > 0 ? b.uncompressedLength : b.length - overhead;
}
