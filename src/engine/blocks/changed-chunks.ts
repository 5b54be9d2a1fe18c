// The content list of a block device backed up against its parent, reading only around the changed ranges.
//
// restic's chunker is content-defined with a minimum size, so a boundary depends on where the chunk began: a change
// can move every boundary after it until the new chunking happens to cut where the parent's did, after which the two
// agree for as long as the bytes do. So each changed range is re-chunked from the parent boundary before it, and the
// parent's blobs are taken again from the first produced boundary that is also a parent boundary past the change.
// The list is then exactly what a full read would have produced; only the re-chunked bytes are read.
import type { Chunker } from '../chunker/chunker.ts';
import { bufferSize, cutChunks } from '../backup/file-chunks.ts';
import type { BlockReader } from './block-reader.ts';
import { normalizeRanges, type ByteRange } from './byte-ranges.ts';

/** One blob of the parent's content list with its plaintext size. */
export interface ParentBlob {
  id: string;
  size: number;
}

export type BlockChunk =
  /** a parent blob taken again without reading it */
  | { reused: ParentBlob; offset: number }
  /** bytes read (valid until the next chunk is asked for) */
  | { data: Uint8Array; offset: number; zero: boolean };

export interface ChangedChunksOptions {
  /** the parent's content for this device; undefined, or a list not summing to the device's size, reads it all */
  parent?: readonly ParentBlob[];
  /** changed ranges since the parent, as reported (clipped and merged here) */
  changed: readonly ByteRange[];
  signal?: AbortSignal;
}

// reads around changes stay small, so a re-chunked stretch reads little past the cut where it stops
const readStep = 256 << 10;

/** Why the parent cannot be used, or undefined when it can. */
export function parentUnusable(parent: readonly ParentBlob[] | undefined, size: number): string | undefined {
  if (!parent) return 'no parent content';
  let sum = 0;
  for (const b of parent) {
    if (!Number.isSafeInteger(b.size) || b.size <= 0) return `parent blob ${b.id} has size ${b.size}`;
    sum += b.size;
  }
  return sum === size ? undefined : `the parent's content holds ${sum} bytes, the device ${size}`;
}

/**
 * The device's chunks in order: read ones and reused parent blobs. `chunker` is reset here. With an unusable parent
 * every byte is read (a full read, which `reader` may still make sparse).
 */
export async function* changedChunks(
  reader: BlockReader,
  chunker: Chunker,
  opts: ChangedChunksOptions,
): AsyncGenerator<BlockChunk> {
  const buf = Buffer.allocUnsafeSlow(bufferSize);
  const parent = parentUnusable(opts.parent, reader.size) ? undefined : opts.parent!;
  if (!parent) {
    yield* chunkFrom(buf, reader, chunker, 0, () => false, bufferSize, opts.signal);
    return;
  }
  const changed = normalizeRanges(opts.changed, reader.size);
  // parent boundaries: ends[i] is where blob i ends; blobAfter maps a boundary to the blob that starts there
  const ends: number[] = [];
  const blobAfter = new Map<number, number>([[0, 0]]);
  for (const [i, b] of parent.entries()) {
    ends.push((ends.at(-1) ?? 0) + b.size);
    blobAfter.set(ends[i], i + 1);
  }
  let blob = 0; // next parent blob
  let pos = 0; // a parent boundary: where blob `blob` starts
  let next = 0; // next changed range not yet covered
  const changeAt = (): number => (next < changed.length ? changed[next].offset : reader.size);
  while (pos < reader.size) {
    // parent blobs wholly before the next change are unchanged and cut where they were
    while (blob < parent.length && ends[blob] <= changeAt()) {
      yield { reused: parent[blob], offset: pos };
      pos = ends[blob++];
    }
    if (pos >= reader.size) break;
    // re-chunk from here; stop at a cut that the parent also made, past every change begun before it, and only
    // where a parent blob can be taken next (stopping before a change just to start again would read twice)
    let dirtyEnd = 0;
    let stop = pos;
    const resynced = (cut: number): boolean => {
      while (next < changed.length && changed[next].offset < cut) {
        dirtyEnd = Math.max(dirtyEnd, changed[next].offset + changed[next].length);
        next++;
      }
      stop = cut;
      const after = blobAfter.get(cut);
      return cut >= dirtyEnd && after !== undefined && (after === parent.length || ends[after] <= changeAt());
    };
    yield* chunkFrom(buf, reader, chunker, pos, resynced, readStep, opts.signal);
    pos = stop;
    while (blob < parent.length && ends[blob] <= pos) blob++;
  }
}

/**
 * Chunks read from `start` into `buf` until `stop(cut)` says so after a cut, or the device ends. Reads are at most
 * `step` bytes, so little is read past a stop.
 */
function chunkFrom(
  buf: Buffer,
  reader: BlockReader,
  chunker: Chunker,
  start: number,
  stop: (cut: number) => boolean,
  step: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<BlockChunk> {
  let readAt = start;
  const read = async (at: number, length: number): Promise<number> => {
    const n = await reader.read(buf, at, Math.min(step, length), readAt);
    readAt += n;
    return n;
  };
  return cutChunks(buf, read, chunker, start, stop, signal);
}
