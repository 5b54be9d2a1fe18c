// Writes one file's content from its blobs: the file is sized first (so untouched ranges stay holes), blobs are
// asked for all at once (within a byte budget) and written at their offsets in any order, and all-zero chunks are
// not written at all, which recreates sparse files and costs nothing for empty disk regions.
import { createHash } from 'node:crypto';
import { open, unlink, type FileHandle } from 'node:fs/promises';
import type { ID } from '../ids/id.ts';
import { sealOverhead } from '../crypto/seal.ts';
import type { BlobLocation } from '../index/table.ts';
import type { ByteBudget } from './byte-budget.ts';
import type { Repository } from '../repository/repository.ts';
import { MissingBlobError } from '../repository/errors.ts';

const zeroIDs = new Map<number, ID>();

function zeroID(length: number): ID {
  let id = zeroIDs.get(length);
  if (id === undefined) {
    id = createHash('sha256').update(new Uint8Array(length)).digest('hex');
    zeroIDs.set(length, id);
  }
  return id;
}

const page = 4096;
const zeroPage = new Uint8Array(page);

/**
 * Writes `data` at `offset` except for whole zero pages, which stay holes in the freshly truncated file. A chunk
 * that mixes data and zeros (the edge of a sparse region) thus costs only its data pages on disk.
 */
async function writeSkippingZeros(fh: FileHandle, data: Uint8Array, offset: number): Promise<void> {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let runStart = -1;
  // pages are aligned to the file, so holes line up with the file system's blocks
  let pos = 0;
  while (pos < buf.length) {
    const next = Math.min(buf.length, pos + page - ((offset + pos) % page));
    const zero = next - pos === page && buf.compare(zeroPage, 0, page, pos, next) === 0;
    if (!zero && runStart < 0) runStart = pos;
    if (zero && runStart >= 0) {
      await fh.write(buf, runStart, pos - runStart, offset + runStart);
      runStart = -1;
    }
    pos = next;
  }
  if (runStart >= 0) await fh.write(buf, runStart, buf.length - runStart, offset + runStart);
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
    const length = loc.uncompressedLength > 0 ? loc.uncompressedLength : loc.length - sealOverhead;
    blobs.push({ id, offset, length, loc });
    offset += length;
  }
  return { blobs, size: offset };
}

export interface WriteTarget {
  /**
   * Write into an existing file or block device (a restore volume): it is neither truncated (a device cannot be)
   * nor removed on failure, and all-zero ranges are left as they are, so it must read as zeros there (freshly
   * provisioned).
   */
  existing?: boolean;
}

/** Where a file's blobs come from: a reader of verified plaintext, and the budget of plaintext bytes in flight. */
export interface ContentSource {
  read(loc: BlobLocation): Promise<Uint8Array>;
  budget: ByteBudget;
}

async function openTarget(path: Buffer, size: number, target: WriteTarget): Promise<FileHandle> {
  const fh = await open(path, target.existing ? 'r+' : 'w', 0o600);
  if (target.existing) return fh;
  try {
    await fh.truncate(size);
  } catch (err) {
    await fh.close();
    throw err;
  }
  return fh;
}

/**
 * Writes a file's content. If any blob cannot be loaded or verified, the file is removed: a restore that fails
 * must not leave a file of the right size with holes where the damaged data was.
 */
export async function writeFileContent(
  repo: Repository, path: Buffer, content: readonly ID[], source: ContentSource, onBytes: (n: number) => void, signal?: AbortSignal,
  target: WriteTarget = {},
): Promise<void> {
  const { blobs, size } = placeBlobs(repo, content);
  // every blob is asked for before the file is open, so the requests of many files reach the reader together
  const opened = openTarget(path, size, target);
  opened.catch(() => undefined); // its failure surfaces where it is awaited
  let failed = false;
  try {
    await Promise.all(blobs.map(async (b) => {
      if (b.id === zeroID(b.length)) {
        onBytes(b.length);
        return;
      }
      const granted = await source.budget.take(b.length);
      try {
        // blobs still queued when another one failed are not fetched for a file that is going away
        if (failed) return;
        signal?.throwIfAborted();
        const data = await source.read(b.loc);
        await writeSkippingZeros(await opened, data, b.offset);
        onBytes(b.length);
      } catch (err) {
        failed = true;
        throw err;
      } finally {
        source.budget.give(granted);
      }
    }));
    await opened;
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    const fh = await opened.catch(() => undefined);
    // close waits for writes still in flight, so nothing lands after the file is removed
    await fh?.close();
    if (failed && fh && !target.existing) await unlink(path).catch(() => undefined);
  }
}
