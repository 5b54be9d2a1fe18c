// Reading a block device (or an image standing in for one) for a changed-block backup: every byte really read is
// counted, so status can say how much of the device a backup touched, and a device whose allocated ranges are known
// reads only those, the rest given as zeros without touching the disk (exactly what a full read of it returns).
import type { FileHandle } from 'node:fs/promises';
import type { ByteRange } from './byte-ranges.ts';

/** Positional reads of a device of known size. */
export interface BlockReader {
  readonly size: number;
  /** bytes fetched from the device so far (zeros given for unallocated ranges are not counted) */
  readonly bytesRead: number;
  /** Fills `buf[at, at + length)` from device offset `position`; returns how many bytes were given (0 at the end). */
  read(buf: Uint8Array, at: number, length: number, position: number): Promise<number>;
}

/** The device read as it is. */
export function deviceReader(fh: Pick<FileHandle, 'read'>, size: number): BlockReader {
  let bytesRead = 0;
  return {
    size,
    get bytesRead() {
      return bytesRead;
    },
    async read(buf, at, length, position) {
      const n = Math.min(length, size - position);
      if (n <= 0) return 0;
      let done = 0;
      while (done < n) {
        const { bytesRead: got } = await fh.read(buf, at + done, n - done, position + done);
        if (got === 0) throw new Error(`device ended at ${position + done} bytes, before its size of ${size}`);
        done += got;
      }
      bytesRead += n;
      return n;
    },
  };
}

/**
 * `inner` with only `allocated` (normalized) ranges read; every other byte is given as zero. Right only when the
 * unallocated ranges really read as zeros, which is what the SnapshotMetadata API promises for them.
 */
export function allocatedReader(inner: BlockReader, allocated: readonly ByteRange[]): BlockReader {
  return {
    size: inner.size,
    get bytesRead() {
      return inner.bytesRead;
    },
    async read(buf, at, length, position) {
      const n = Math.min(length, inner.size - position);
      if (n <= 0) return 0;
      const end = position + n;
      buf.fill(0, at, at + n);
      for (const r of overlapping(allocated, position, end)) {
        const from = Math.max(position, r.offset);
        const to = Math.min(end, r.offset + r.length);
        await inner.read(buf, at + (from - position), to - from, from);
      }
      return n;
    },
  };
}

/** The ranges of sorted `ranges` meeting [start, end), found by binary search (a device may have many thousands). */
function* overlapping(ranges: readonly ByteRange[], start: number, end: number): Generator<ByteRange> {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ranges[mid].offset + ranges[mid].length <= start) lo = mid + 1;
    else hi = mid;
  }
  for (let i = lo; i < ranges.length && ranges[i].offset < end; i++) yield ranges[i];
}
