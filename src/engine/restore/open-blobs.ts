// The ways a restore opens the blobs of one pack read: on worker threads (decryption and hashing are most of a
// restore's CPU), on this thread (a stream restore, which writes one file and has no pool), or on this thread and,
// for a read that finds it free, on the restore's small-file thread.
import type { ID } from '../ids/id.ts';
import type { Repository } from '../repository/repository.ts';
import { CorruptBlobError } from '../repository/errors.ts';
import type { PackedBlob } from '../pack/blob.ts';

/**
 * Opens (decrypts, decompresses, verifies) the blobs of one pack read: `bytes` holds the pack from `start` on.
 * Each result is the plaintext or the reason that blob could not be opened. `inPlace`: the blobs' bytes are the
 * opener's to give up (nobody else reads them, and no two blobs overlap), so it may decrypt over them and hand out
 * views of `bytes`.
 */
export type OpenBlobs = (
  pack: ID,
  blobs: readonly PackedBlob[],
  bytes: Uint8Array,
  start: number,
  inPlace: boolean,
) => Promise<(Uint8Array | Error)[]>;

/** Blobs go to the workers in groups of about this many bytes: a few messages per read, and every worker busy. */
const groupBytes = 1 << 20;

/** Threads that open blobs (the backup's worker pool is one): each answer is the plaintext or why it is corrupt. */
export interface BlobThreads {
  openBlobs(bytes: Uint8Array, blobs: BlobInRead[]): Promise<(Uint8Array | string)[]>;
}

/** A blob as a thread opening a read is told of it: its offset is into the bytes it is given. */
export interface BlobInRead {
  id: ID;
  offset: number;
  length: number;
  uncompressedLength: number;
}

export function openOnWorkers(pool: BlobThreads): OpenBlobs {
  return async (pack, blobs, bytes, start) => {
    const groups: (typeof blobs)[] = [];
    let group: (typeof blobs)[number][] = [];
    for (const b of blobs) {
      if (group.length > 0 && b.offset + b.length - group[0].offset > groupBytes) {
        groups.push(group);
        group = [];
      }
      group.push(b);
    }
    groups.push(group);
    const opened = await Promise.all(
      groups.map((g) => {
        const from = g[0].offset;
        const to = Math.max(...g.map((b) => b.offset + b.length));
        // a copy of just this group, which the message then moves: a view (Buffer#slice makes one) cannot be moved,
        // so posting it cloned the whole read, 17 MiB for every 1 MiB group
        const part = new Uint8Array(bytes.subarray(from - start, to - start));
        return pool.openBlobs(part, placedIn(g, from));
      }),
    );
    return named(pack, blobs, opened.flat());
  };
}

/** Each blob placed in a buffer that starts at pack offset `from`, as a thread opening it is told. */
function placedIn(blobs: readonly PackedBlob[], from: number): BlobInRead[] {
  return blobs.map((b) => ({
    id: b.id,
    offset: b.offset - from,
    length: b.length,
    uncompressedLength: b.uncompressedLength,
  }));
}

/** A thread's answers, each reason a blob could not be trusted made an error naming its pack and id. */
function named(
  pack: ID,
  blobs: readonly PackedBlob[],
  opened: (Uint8Array | string | Error)[],
): (Uint8Array | Error)[] {
  return opened.map((r, i) => (typeof r === 'string' ? new CorruptBlobError(pack, blobs[i].id, r) : r));
}

/** A thread that opens a whole pack read, given to it (see SmallFileWriter). */
export interface ReadOpener {
  /** whether it takes a read now (it has nothing else to do, and little queued) */
  readonly takesReads: boolean;
  openRead(bytes: Uint8Array<ArrayBuffer>, blobs: BlobInRead[]): Promise<(Uint8Array | string)[]>;
}

/**
 * Opens on `here`, except a read that is the opener's to give up, whole, while `helper` takes reads: that read moves
 * to the helper (no copy), which opens it, and this thread goes on to the next. A restore's small-file thread is such a
 * helper: with no small files to write it sat idle while its restore opened large files alone on one core.
 */
export function openSharing(here: OpenBlobs, helper: ReadOpener): OpenBlobs {
  return async (pack, blobs, bytes, start, inPlace) => {
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    if (!inPlace || !whole || !helper.takesReads || !(bytes.buffer instanceof ArrayBuffer))
      return here(pack, blobs, bytes, start, inPlace);
    return named(pack, blobs, await moved(helper, pack, blobs, bytes as Uint8Array<ArrayBuffer>, start));
  };
}

/** The helper's answers for a moved read; a helper that fails (stopped, closed) fails each blob, naming it. */
async function moved(
  helper: ReadOpener,
  pack: ID,
  blobs: readonly PackedBlob[],
  bytes: Uint8Array<ArrayBuffer>,
  start: number,
): Promise<(Uint8Array | string | Error)[]> {
  try {
    return await helper.openRead(bytes, placedIn(blobs, start));
  } catch (err) {
    // the read moved (or was refused): nothing is left here to open, and each blob says why it did not come
    return blobs.map((b) => new Error(`blob ${b.id} of pack ${pack} was not opened: ${(err as Error).message}`));
  }
}

/**
 * A plaintext that owns its memory. zstd hands a small blob back as a view of a 64 KiB buffer, and a blob waiting
 * to be written would hold all of it: with hundreds of small files in flight, that was most of a restore's memory.
 */
export function compact(plain: Uint8Array): Uint8Array {
  return plain.byteLength * 2 < plain.buffer.byteLength ? new Uint8Array(plain) : plain;
}

export function openHere(repo: Repository): OpenBlobs {
  return async (pack, blobs, bytes, start, inPlace) =>
    blobs.map((b) => {
      try {
        const sealed = bytes.subarray(b.offset - start, b.offset - start + b.length);
        const plain = repo.openPackedBlob(pack, b, sealed, inPlace);
        // decrypted in place: a view of the read, which its run's blobs share and the budget counts
        return plain.buffer === bytes.buffer ? plain : compact(plain);
      } catch (err) {
        return err as Error;
      }
    });
}
