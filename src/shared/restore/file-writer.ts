// Writes one file's content from its blobs: the file is sized first (so untouched ranges stay holes), blobs are
// fetched a few at a time and written at their offsets in any order, and all-zero chunks are not written at all,
// which recreates sparse files and costs nothing for empty disk regions.
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { ID } from '../ids/id.ts';
import { sealOverhead } from '../crypto/seal.ts';
import type { Semaphore } from '../concurrency/semaphore.ts';
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

export interface BlobPlacement {
  id: ID;
  offset: number;
  length: number;
}

/** Where each content blob lands in the file, from the plaintext lengths the index records. */
export function placeBlobs(repo: Repository, content: readonly ID[]): { blobs: BlobPlacement[]; size: number } {
  const blobs: BlobPlacement[] = [];
  let offset = 0;
  for (const id of content) {
    const loc = repo.index.get(id, 'data');
    if (!loc) throw new MissingBlobError('data', id);
    const length = loc.uncompressedLength > 0 ? loc.uncompressedLength : loc.length - sealOverhead;
    blobs.push({ id, offset, length });
    offset += length;
  }
  return { blobs, size: offset };
}

export async function writeFileContent(
  repo: Repository, path: Buffer, content: readonly ID[], loads: Semaphore, onBytes: (n: number) => void, signal?: AbortSignal,
): Promise<void> {
  const { blobs, size } = placeBlobs(repo, content);
  const fh = await open(path, 'w', 0o600);
  try {
    await fh.truncate(size);
    await Promise.all(blobs.map(async (b) => {
      if (b.id === zeroID(b.length)) {
        onBytes(b.length);
        return;
      }
      await loads.acquire();
      try {
        signal?.throwIfAborted();
        const data = await repo.loadBlob('data', b.id, signal);
        await fh.write(data, 0, data.length, b.offset);
        onBytes(b.length);
      } finally {
        loads.release();
      }
    }));
  } finally {
    await fh.close();
  }
}
