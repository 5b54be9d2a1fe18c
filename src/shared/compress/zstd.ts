// zstd through node:zlib. Repository format v2 compresses blobs and unpacked files with zstd; any valid frame is
// readable by restic, so the level is ours to choose.
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';

export const defaultLevel = 3;

export function compress(data: Uint8Array, level: number = defaultLevel): Uint8Array {
  return zstdCompressSync(data, {
    // knowing the size up front lets zstd size its tables to the input: most blobs are far below its window
    pledgedSrcSize: data.length,
    params: {
      [constants.ZSTD_c_compressionLevel]: level,
      [constants.ZSTD_c_checksumFlag]: 0,
      [constants.ZSTD_c_contentSizeFlag]: 1,
    },
  });
}

/** `expectedSize` bounds the output, so a corrupted or hostile frame cannot make us allocate without limit. */
export function decompress(data: Uint8Array, expectedSize?: number): Uint8Array {
  const out = zstdDecompressSync(data, expectedSize === undefined ? {} : { maxOutputLength: Math.max(expectedSize, 1) });
  if (expectedSize !== undefined && out.length !== expectedSize) {
    throw new Error(`decompressed ${out.length} bytes where the index promised ${expectedSize}`);
  }
  return out;
}
