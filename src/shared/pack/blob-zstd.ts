// zstd for blobs, with one output buffer sized to the blob. node:zlib's sync calls otherwise collect their output
// in 64 KiB chunks: for a small file's blob that is 64 KiB of garbage per compression and per read-back, which
// worker threads (small heaps, rare collections) kept by the hundred megabytes; for a big blob, chunks joined by a
// copy. The frame is compress/zstd.ts's (same level and flags): the output chunk does not change a byte of it.
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';
import { defaultLevel } from '../compress/zstd.ts';

/** node:zlib's smallest output chunk */
const minChunk = 64;

function chunkFor(length: number): number {
  return Math.max(minChunk, length);
}

const params = {
  [constants.ZSTD_c_compressionLevel]: defaultLevel,
  [constants.ZSTD_c_checksumFlag]: 0,
  [constants.ZSTD_c_contentSizeFlag]: 1,
};

export function compressBlob(plain: Uint8Array): Uint8Array {
  // a frame no smaller than its input is not kept, so a chunk of the input's size is all a useful frame needs
  return zstdCompressSync(plain, { pledgedSrcSize: plain.length, chunkSize: chunkFor(plain.length), params });
}

/** A blob's plaintext of known length; throws when the frame does not decompress to exactly that. */
export function decompressBlob(body: Uint8Array, uncompressedLength: number): Uint8Array {
  const out = zstdDecompressSync(body, { maxOutputLength: Math.max(uncompressedLength, 1), chunkSize: chunkFor(uncompressedLength) });
  if (out.length !== uncompressedLength) throw new Error(`decompressed ${out.length} bytes where the index promised ${uncompressedLength}`);
  return out;
}
