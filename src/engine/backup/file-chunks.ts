// Reading one file or block device as content-defined chunks. One large buffer holds the unprocessed tail, so a
// chunk (at most 8 MiB) is always contiguous and handed out without copying; the consumer must finish with it
// before asking for the next.
import type { Chunker } from '../chunker/chunker.ts';
import { maxChunkSize } from '../chunker/limits.ts';
import { openForBackup } from './open-source.ts';

// a whole chunk (at most maxChunkSize) plus room to read ahead; several files are read at once, so this is kept small
const bufferSize = maxChunkSize + (1 << 20);

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
    chunker.reset();
    let start = 0; // first byte of the current chunk
    let scan = 0; // next byte the chunker has not seen
    let end = 0; // end of data in buf
    let fileOffset = 0; // file offset of buf[start]
    let eof = false;
    for (;;) {
      if (scan === end) {
        if (eof) break;
        if (start > 0) {
          buf.copy(buf, 0, start, end);
          end -= start;
          scan -= start;
          start = 0;
        }
        signal?.throwIfAborted();
        const { bytesRead } = await fh.read(buf, end, bufferSize - end, null);
        if (bytesRead === 0) eof = true;
        end += bytesRead;
        continue;
      }
      const cut = chunker.next(buf.subarray(0, end), scan);
      if (cut < 0) {
        scan = end;
        continue;
      }
      const data = buf.subarray(start, cut);
      yield { data, offset: fileOffset, zero: isAllZero(data) };
      fileOffset += cut - start;
      start = cut;
      scan = cut;
    }
    if (end > start) {
      const data = buf.subarray(start, end);
      yield { data, offset: fileOffset, zero: isAllZero(data) };
    }
  } finally {
    spareBuffers.push(buf);
    await fh.close();
  }
}

function pathArg(p: string | Uint8Array): string | Buffer {
  return typeof p === 'string' ? p : Buffer.from(p.buffer, p.byteOffset, p.byteLength);
}
