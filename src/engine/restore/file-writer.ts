// Writes one file's content from its blobs: blobs are asked for all at once (the source bounds what it hands over)
// and written at their offsets in any order, all-zero chunks are not written at all (untouched ranges stay holes,
// which recreates sparse files and costs nothing for empty disk regions), and a file whose last bytes were such a
// hole is extended to its size at the end (one system call fewer for every file that ends in data, most of them).
// A file is opened only when its first blob is ready, so files waiting for data hold no descriptor and the restorer
// can ask for the blobs of many files before their folders even exist. A new file is preallocated once open, its
// data ranges only: blobs of one file arrive from several packs at once and land at their offsets, and reserved
// blocks keep the file in one piece; zero chunks stay unreserved, and zero pages inside a blob are punched out of the
// reservation, so a sparse file keeps exactly the holes it would have had without one.
import { ftruncateSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { zeroID, type ID } from '../ids/id.ts';
import type { BlobLocation } from '../index/table.ts';
import { plainLength } from '../pack/blob.ts';
import type { Semaphore } from '../concurrency/semaphore.ts';
import type { Repository } from '../repository/repository.ts';
import { MissingBlobError } from '../repository/errors.ts';
import { release } from '../memory/release.ts';
import { preallocate, punchHole } from '../sys/allocate.ts';
import { skipsZeroRanges, writeZeros, type ZeroTarget } from './zero-ranges.ts';
import { pageRuns } from './zero-pages.ts';

/**
 * A chunk of zeros compresses to almost nothing; any blob that does not is not worth hashing a run of zeros for
 * (that costs as much as verifying the blob: most blobs have a length of their own).
 */
const zeroRatio = 64;

/**
 * Writes `data` at `offset` except for whole zero pages, which stay holes in the new file (zero-pages.ts). Each run
 * of zero pages skipped goes to `onHole` (a reserved file gives its blocks back). Returns the end of the last byte
 * written (0 when nothing was).
 */
async function writeSkippingZeros(
  fh: WritableFile,
  data: Uint8Array,
  offset: number,
  onHole?: (offset: number, length: number) => void,
): Promise<number> {
  const { data: runs, holes } = pageRuns(data, offset);
  for (const [start, end] of holes) onHole?.(offset + start, end - start);
  for (const [start, end] of runs) await fh.write(data, start, end - start, offset + start);
  return runs.length > 0 ? offset + runs[runs.length - 1][1] : 0;
}

async function writeWhole(fh: WritableFile, data: Uint8Array, offset: number): Promise<number> {
  await fh.write(data, 0, data.byteLength, offset);
  return offset + data.byteLength;
}

/** An all-zero chunk (a hole of a sparse file), known from the index without reading it. */
export function isZeroBlob(b: BlobPlacement): boolean {
  const { length, uncompressedLength } = b.loc;
  return uncompressedLength > 0 && length * zeroRatio < uncompressedLength && b.id === zeroID(b.length);
}

export interface BlobPlacement {
  id: ID;
  offset: number;
  length: number;
  loc: BlobLocation;
}

/** Where each content blob lands in the file, from the plaintext lengths the index records. */
export function placeBlobs(repo: Repository, content: readonly ID[]): { blobs: BlobPlacement[]; size: number } {
  const blobs: BlobPlacement[] = [];
  let offset = 0;
  for (const id of content) {
    const loc = repo.index.get(id, 'data');
    if (!loc) throw new MissingBlobError('data', id);
    const length = plainLength(loc);
    blobs.push({ id, offset, length, loc });
    offset += length;
  }
  return { blobs, size: offset };
}

/**
 * The ranges of a file its data blobs cover, neighbours merged: all of it for a file without zero chunks, and only
 * the data between the holes of a sparse one.
 */
export function dataRanges(blobs: readonly BlobPlacement[]): { offset: number; length: number }[] {
  const ranges: { offset: number; length: number }[] = [];
  for (const b of blobs) {
    if (b.length === 0 || isZeroBlob(b)) continue;
    const last = ranges.at(-1);
    if (last && last.offset + last.length === b.offset) last.length += b.length;
    else ranges.push({ offset: b.offset, length: b.length });
  }
  return ranges;
}

/**
 * Reserves a new file's data ranges and, when any is reserved, gives the file its size at once: a file system
 * punches holes only below a file's end (ext4 leaves a range past it reserved), and zero pages may come before the
 * data behind them is written. False when the file system reserved nothing.
 */
function reserveData(fd: number, blobs: readonly BlobPlacement[], size: number): boolean {
  const reserved = preallocate(fd, dataRanges(blobs));
  if (reserved) ftruncateSync(fd, size);
  return reserved;
}

export interface WriteTarget extends ZeroTarget {
  /**
   * Write into an existing file or block device (a restore volume): it is neither truncated (a device cannot be)
   * nor removed on failure, and its all-zero ranges are written unless `zeroed` says it reads as zeros already.
   */
  existing?: boolean;
  /** settles once the file's folder exists; the file is created only after it */
  ready?: Promise<unknown>;
  /** creates the file (in place of opening `path`), and removes it again when its content fails */
  create?: () => WritableFile;
  discard?: () => void;
}

/** What the writer needs of an open file: a FileHandle, or a DescriptorFile. */
export interface WritableFile {
  /** for the reservation of its blocks */
  readonly fd: number;
  write(buf: Uint8Array, offset: number, length: number, position: number): Promise<unknown>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

/** Where a file's blobs come from: a reader of verified plaintext, told when each blob it handed over is written. */
export interface ContentSource {
  /**
   * The blob's plaintext, which becomes the writer's own: it is freed once written (`release`), as the gigabytes a
   * restore moves otherwise stood as garbage until a collection, and the collections they caused cost the main thread.
   */
  read(loc: BlobLocation): Promise<Uint8Array>;
  /** the blob read at `loc` is written (or given up): `data`, what read() gave, is no longer used */
  done(loc: BlobLocation, data: Uint8Array): void;
  /** bounds the writes in flight, so they cannot fill libuv's threads ahead of the pack reads */
  writes?: Semaphore;
}

/**
 * Writes a file's content. If any blob cannot be loaded or verified, the file is removed: a restore that fails
 * must not leave a file of the right size with holes where the damaged data was.
 */
export async function writeFileContent(
  repo: Repository,
  path: Buffer,
  content: readonly ID[],
  source: ContentSource,
  onBytes: (n: number) => void,
  signal?: AbortSignal,
  target: WriteTarget = {},
): Promise<void> {
  const { blobs, size } = placeBlobs(repo, content);
  let opened: Promise<WritableFile> | undefined;
  /** how far the file reaches: the end of its last byte written, or its size once it was given that up front */
  let written = 0;
  /** set once the new file's data ranges are reserved: zero pages skipped inside them are given back */
  let onHole: ((offset: number, length: number) => void) | undefined;
  const handle = (): Promise<WritableFile> => {
    opened ??= (async (): Promise<WritableFile> => {
      await target.ready;
      const fh = target.create ? target.create() : await open(path, target.existing ? 'r+' : 'w', 0o600);
      // an existing file or device has its blocks; the reservation is for the file this restore makes
      if (!target.existing && reserveData(fh.fd, blobs, size)) {
        onHole = (at, length) => punchHole(fh.fd, at, length);
        written = size;
      }
      return fh;
    })();
    return opened;
  };
  let failed = false;
  const skipZeros = skipsZeroRanges(target);
  try {
    const tasks = blobs.map(async (b) => {
      if (isZeroBlob(b) && skipZeros) {
        onBytes(b.length);
        return;
      }
      if (isZeroBlob(b)) {
        await writeZeros(await handle(), b.offset, b.length);
        onBytes(b.length);
        return;
      }
      let data: Uint8Array | undefined;
      try {
        signal?.throwIfAborted();
        data = await source.read(b.loc);
        if (failed) return;
        const fh = await handle();
        await source.writes?.acquire();
        try {
          // a wait for the bound may outlast the file: nothing more is written to one that is going away
          if (failed) return;
          const end = skipZeros
            ? await writeSkippingZeros(fh, data, b.offset, onHole)
            : await writeWhole(fh, data, b.offset);
          written = Math.max(written, end);
          release(data);
        } finally {
          source.writes?.release();
        }
        onBytes(b.length);
      } catch (err) {
        failed = true;
        throw err;
      } finally {
        if (data) source.done(b.loc, data);
      }
    });
    // every blob settles before the file is given up: one still in flight would otherwise create it afterwards
    const failure = (await Promise.allSettled(tasks)).find((r) => r.status === 'rejected');
    if (failure) throw failure.reason;
    // an empty file, or one of holes only, is created here; a device or an existing volume already has its size
    const fh = await handle();
    if (!target.existing && written < size) await fh.truncate(size);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    const fh = await opened?.catch(() => undefined);
    // close waits for writes still in flight, so nothing lands after the file is removed
    await fh?.close();
    if (failed && fh && !target.existing)
      await (target.discard ? Promise.resolve().then(target.discard) : unlink(path)).catch(() => undefined);
  }
}
