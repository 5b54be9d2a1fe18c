// Reading one file or block device as content-defined chunks. One large buffer holds the unprocessed tail, so a
// chunk (at most 8 MiB) is always contiguous and handed out without copying; the consumer must finish with it
// before asking for the next.
import type { Chunker } from '../chunker/chunker.ts';
import { maxChunkSize } from '../chunker/limits.ts';
import { openForBackup } from './open-source.ts';

// a whole chunk (at most maxChunkSize) plus room to read ahead; several files are read at once, so this is kept small
export const bufferSize = maxChunkSize + (1 << 20);

export interface FileChunk {
  data: Uint8Array;
  offset: number;
  /** every byte is zero: sparse regions and empty disk areas, recognised without hashing */
  zero: boolean;
}

const zeros = new Uint8Array(maxChunkSize);

export function isAllZero(b: Uint8Array): boolean {
  return Buffer.compare(b, zeros.subarray(0, b.length)) === 0;
}

/**
 * Read buffers of finished files, kept for the next: 9 MiB per file was garbage that a worker thread's rare
 * collections left standing by the dozen. At most as many as files were read at once in this thread.
 */
const spareBuffers: Buffer[] = [];

/** `chunker` is reset here; callers reuse one per concurrent file, as building one costs tables and memory. */
export async function* fileChunks(
  path: string | Uint8Array,
  chunker: Chunker,
  signal?: AbortSignal,
): AsyncGenerator<FileChunk> {
  const fh = await openForBackup(pathArg(path));
  const buf = spareBuffers.pop() ?? Buffer.allocUnsafeSlow(bufferSize);
  try {
    const read = async (at: number, length: number): Promise<number> =>
      (await fh.read(buf, at, length, null)).bytesRead;
    yield* cutChunks(buf, read, chunker, 0, () => false, signal);
  } finally {
    spareBuffers.push(buf);
    await fh.close();
  }
}

/**
 * Chunks of a stream `read` fills into `buf` (at least bufferSize bytes), with offsets counted from `start`, until
 * `stop(end of the chunk)` says so after a chunk or the stream ends. `chunker` is reset here.
 */
export async function* cutChunks(
  buf: Buffer,
  read: (at: number, length: number) => Promise<number>,
  chunker: Chunker,
  start: number,
  stop: (cut: number) => boolean,
  signal?: AbortSignal,
): AsyncGenerator<FileChunk> {
  chunker.reset();
  let begin = 0; // first byte of the current chunk
  let scan = 0; // next byte the chunker has not seen
  let end = 0; // end of data in buf
  let offset = start; // stream offset of buf[begin]
  for (;;) {
    if (scan === end) {
      if (begin > 0) {
        buf.copy(buf, 0, begin, end);
        end -= begin;
        scan -= begin;
        begin = 0;
      }
      signal?.throwIfAborted();
      const n = await read(end, bufferSize - end);
      if (n === 0) break;
      end += n;
      continue;
    }
    const cut = chunker.next(buf.subarray(0, end), scan);
    if (cut < 0) {
      scan = end;
      continue;
    }
    const data = buf.subarray(begin, cut);
    yield { data, offset, zero: isAllZero(data) };
    offset += cut - begin;
    begin = cut;
    scan = cut;
    if (stop(offset)) return;
  }
  if (end > begin) {
    const data = buf.subarray(begin, end);
    yield { data, offset, zero: isAllZero(data) };
    stop(offset + data.length);
  }
}

function pathArg(p: string | Uint8Array): string | Buffer {
  return typeof p === 'string' ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength);
}
