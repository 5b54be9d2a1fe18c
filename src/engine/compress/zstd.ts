// zstd through node:zlib. Repository format v2 compresses blobs and unpacked files with zstd; any valid frame is
// readable by restic, so the level is ours to choose.
import { constants, zstdCompressSync, zstdDecompressSync } from 'node:zlib';

export const defaultLevel = 3;

/** The parameters of every frame ferry writes: the level, no checksum (the MAC covers it), the content size. */
export function zstdParams(level: number): Record<number, number> {
  return {
    [constants.ZSTD_c_compressionLevel]: level,
    [constants.ZSTD_c_checksumFlag]: 0,
    [constants.ZSTD_c_contentSizeFlag]: 1,
  };
}

export function compress(data: Uint8Array, level: number = defaultLevel): Uint8Array {
  // knowing the size up front lets zstd size its tables to the input: most blobs are far below its window
  return zstdCompressSync(data, { pledgedSrcSize: data.length, params: zstdParams(level) });
}

/** Output buffers of one decompression are at most this big: a frame's header may claim any size. */
const maxChunk = 64 << 20;

/**
 * Decompresses a whole frame, as unpacked files (index, snapshot) are stored. `expectedSize` bounds the output, so a
 * corrupted or hostile frame cannot make us allocate without limit. With the size known (given, or declared by the
 * frame's header) the output is one buffer: node:zlib otherwise fills 16 KiB chunks and joins them, a noticeable
 * share of the time of loading a large index.
 */
export function decompress(data: Uint8Array, expectedSize?: number): Uint8Array {
  const size = expectedSize ?? frameContentSize(data);
  // one byte more than the content, so the first write sees the frame end with room left and stops there (zlib
  // refuses chunks under 64 bytes)
  const chunkSize = size === undefined ? undefined : Math.max(64, Math.min(size + 1, maxChunk));
  const out = zstdDecompressSync(data, {
    chunkSize,
    maxOutputLength: expectedSize === undefined ? undefined : Math.max(expectedSize, 1),
  });
  if (expectedSize !== undefined && out.length !== expectedSize) {
    throw new Error(`decompressed ${out.length} bytes where the index promised ${expectedSize}`);
  }
  return out;
}

const frameMagic = 0xfd2fb528;

/** The content size a zstd frame's header declares (RFC 8878, 3.1.1.1), or undefined when it declares none. */
export function frameContentSize(frame: Uint8Array): number | undefined {
  if (frame.length < 6) return undefined;
  const view = new DataView(frame.buffer, frame.byteOffset, frame.byteLength);
  if (view.getUint32(0, true) !== frameMagic) return undefined;
  const descriptor = frame[4];
  const singleSegment = (descriptor & 0x20) !== 0;
  const sizeFlag = descriptor >> 6;
  const sizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][sizeFlag];
  if (sizeBytes === 0) return undefined;
  const at = 5 + (singleSegment ? 0 : 1) + [0, 1, 2, 4][descriptor & 3];
  if (frame.length < at + sizeBytes) return undefined;
  if (sizeBytes === 1) return view.getUint8(at);
  if (sizeBytes === 2) return view.getUint16(at, true) + 256;
  if (sizeBytes === 4) return view.getUint32(at, true);
  const big = view.getBigUint64(at, true);
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : undefined;
}
