// The pack trailer: an encrypted table of entries (type, stored length, [uncompressed length], blob id) followed
// by the encrypted table's length as a little-endian uint32. Blobs sit back to back before it, in table order.
import type { MasterKey } from '../crypto/key.ts';
import { open, sealInto, sealOverhead } from '../crypto/seal.ts';
import { bytesToID } from '../ids/id.ts';
import { decodeEntryType, entryType, type BlobList, type PackedBlob } from './blob.ts';

const plainEntrySize = 1 + 4 + 32;
const compressedEntrySize = 1 + 4 + 4 + 32;
/** restic refuses headers past this many entries; so do we, so a corrupt length cannot make us read gigabytes. */
const maxHeaderEntries = 1 << 24;

export function entrySize(b: { uncompressedLength: number }): number {
  return b.uncompressedLength > 0 ? compressedEntrySize : plainEntrySize;
}

/** Bytes of the pack trailer (sealed header and its length) for header entries of `entryBytes` in all. */
export function trailerSize(entryBytes: number): number {
  return entryBytes + sealOverhead + 4;
}

/**
 * Writes the trailer into `out` at `at`, which must have room for it (trailerSize of the entries): a pack being
 * filled has, so the header of 100k tiny blobs is sealed in place instead of through two copies of a few MiB.
 * Returns the bytes written.
 */
export function writeTrailer(key: MasterKey, blobs: BlobList, out: Buffer, at: number): number {
  const plain = headerEntries(blobs);
  const sealedLength = plain.length + sealOverhead;
  sealInto(key, plain, out.subarray(at, at + sealedLength));
  out.writeUInt32LE(sealedLength, at + sealedLength);
  return sealedLength + 4;
}

function headerEntries(list: BlobList): Buffer {
  let size = 0;
  list.forEachBlob((b) => {
    size += entrySize(b);
  });
  const plain = Buffer.alloc(size);
  let p = 0;
  list.forEachBlob((b) => {
    const compressed = b.uncompressedLength > 0;
    plain[p] = entryType(b.type, compressed);
    plain.writeUInt32LE(b.length, p + 1);
    p += 5;
    if (compressed) {
      plain.writeUInt32LE(b.uncompressedLength, p);
      p += 4;
    }
    b.ids.copy(plain, p, b.at, b.at + 32);
    p += 32;
  });
  return plain;
}

export class PackFormatError extends Error {}

/** Decrypt and parse a header; offsets are recomputed from the entry lengths and checked against the pack size. */
export function decodeHeader(key: MasterKey, sealedHeader: Uint8Array, packSize: number): PackedBlob[] {
  const plain = Buffer.from(open(key, sealedHeader));
  const blobs: PackedBlob[] = [];
  let p = 0;
  let offset = 0;
  while (p < plain.length) {
    const { type, compressed } = decodeEntryType(plain[p]);
    const need = compressed ? compressedEntrySize : plainEntrySize;
    if (p + need > plain.length) throw new PackFormatError('pack header ends inside an entry');
    const length = plain.readUInt32LE(p + 1);
    const uncompressedLength = compressed ? plain.readUInt32LE(p + 5) : 0;
    const id = bytesToID(plain.subarray(p + need - 32, p + need));
    blobs.push({ id, type, offset, length, uncompressedLength });
    offset += length;
    p += need;
    if (blobs.length > maxHeaderEntries) throw new PackFormatError('pack header has too many entries');
  }
  const expected = offset + sealedHeader.length + 4;
  if (expected !== packSize) {
    throw new PackFormatError(`pack size ${packSize} does not match its header (expected ${expected})`);
  }
  return blobs;
}

/** Where the sealed header sits, given the last 4 bytes of the pack. */
export function headerRange(packSize: number, trailer: Uint8Array): { offset: number; length: number } {
  const len = Buffer.from(trailer.buffer, trailer.byteOffset, 4).readUInt32LE(0);
  if (len < sealOverhead || len + 4 > packSize) {
    throw new PackFormatError(`pack header length ${len} is impossible for a pack of ${packSize} bytes`);
  }
  return { offset: packSize - 4 - len, length: len };
}
