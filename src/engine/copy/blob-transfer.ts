// Blobs crossing from one repository into another. Each is queued under the source pack that holds it, unless the
// destination has it or it is already on its way; a full queue is drained a stretch of a pack at a time, each blob
// decrypted and checked against its id with the source's key, then compressed (for a format v2 destination) and
// sealed anew with the destination's key into the destination's packs. Blobs keep their ids: they are copied as the
// source chunked them, never re-chunked, as restic's copy does.
// Memory stays bounded whatever the snapshot: the queue holds a batch of blob locations, not their bytes, and at
// most `readAhead` stretches of packs are in memory beside the writer's open packs.
import type { ID } from '../ids/id.ts';
import type { BlobLocation } from '../index/table.ts';
import { plainLength, type BlobType } from '../pack/blob.ts';
import { prepareBlob } from '../pack/prepare.ts';
import type { PackWriter } from '../repository/pack-writer.ts';
import type { Repository } from '../repository/repository.ts';
import { allocated } from '../memory/collect.ts';
import { release } from '../memory/release.ts';

export interface TransferCounts {
  /** blobs copied so far, and their plaintext bytes */
  blobsDone: number;
  bytesDone: number;
  /** plaintext bytes of every blob queued so far */
  bytesTotal: number;
}

interface Span {
  pack: ID;
  start: number;
  end: number;
  blobs: BlobLocation[];
}

/** blobs queued before the queue is drained: enough to read packs whole, few enough to keep the queue small */
const batchBlobs = 20_000;
/** a gap between wanted blobs up to this is read through rather than split into two reads */
const maxGap = 256 << 10;
/** the longest single read of a pack */
const maxSpan = 16 << 20;
/** pack stretches read ahead of the one being copied, so the next read's latency hides behind the copying */
const readAhead = 2;

export class BlobTransfer {
  readonly counts: TransferCounts = { blobsDone: 0, bytesDone: 0, bytesTotal: 0 };
  readonly #source: Repository;
  readonly #destination: Repository;
  readonly #writer: PackWriter;
  readonly #onCopied: () => void;
  readonly #queue = new Map<ID, BlobLocation[]>();
  #queued = 0;

  /** `writer` writes into `destination`; `onCopied` is told after each blob. */
  constructor(source: Repository, destination: Repository, writer: PackWriter, onCopied: () => void) {
    this.#source = source;
    this.#destination = destination;
    this.#writer = writer;
    this.#onCopied = onCopied;
  }

  /**
   * Queues the blob unless the destination holds it or it is already on its way. False when the destination lacks
   * it and the source's index does not know it either: nothing could copy it.
   */
  want(type: BlobType, id: ID): boolean {
    if (this.#writer.has(type, id)) return true;
    const loc = this.#source.index.get(id, type);
    if (!loc) return false;
    this.#writer.claim(type, id);
    const list = this.#queue.get(loc.pack);
    if (list) list.push(loc);
    else this.#queue.set(loc.pack, [loc]);
    this.#queued++;
    this.counts.bytesTotal += plainLength(loc);
    return true;
  }

  async drainIfFull(signal?: AbortSignal): Promise<void> {
    if (this.#queued >= batchBlobs) await this.drain(signal);
  }

  /** Copies every queued blob into the writer (whose packs may still be open: the caller flushes). */
  async drain(signal?: AbortSignal): Promise<void> {
    const spans = [...this.#queue].flatMap(([pack, blobs]) => spansOf(pack, blobs));
    this.#queue.clear();
    this.#queued = 0;
    const reads: Promise<Uint8Array>[] = [];
    for (let i = 0; i < spans.length; i++) {
      while (reads.length < readAhead && i + reads.length < spans.length)
        reads.push(this.#read(spans[i + reads.length], signal));
      const bytes = await reads.shift()!;
      const span = spans[i];
      for (const b of span.blobs)
        await this.#copy(b, bytes.subarray(b.offset - span.start, b.offset - span.start + b.length), signal);
      // its blobs are in the writer's packs now: the stretch (up to 16 MiB) need not wait for a collection
      release(bytes);
    }
  }

  #read(span: Span, signal?: AbortSignal): Promise<Uint8Array> {
    const read = this.#source.backend.load(
      { type: 'pack', name: span.pack },
      span.start,
      span.end - span.start,
      signal,
    );
    // a read ahead may fail while an earlier stretch is being copied; it is reported when its turn comes
    read.catch(() => undefined);
    return read;
  }

  async #copy(b: BlobLocation, sealed: Uint8Array, signal?: AbortSignal): Promise<void> {
    let plain: Uint8Array;
    try {
      plain = this.#source.openPackedBlob(b.pack, b, sealed);
    } catch (err) {
      // another pack may hold a good copy; loadBlob tries each and reports the first failure
      if (this.#source.index.locations(b.id, b.type).length < 2) throw err;
      plain = await this.#source.loadBlob(b.type, b.id, signal);
    }
    const dst = this.#destination;
    const prepared = prepareBlob(dst.key, b.type, b.id, plain, dst.config.version >= 2);
    // the plaintext and the sealed copy die young: collected every few tens of megabytes, not left to pile up
    allocated(plain.length + prepared.sealed.length);
    await this.#writer.add(prepared, plain.length, signal);
    this.counts.blobsDone++;
    this.counts.bytesDone += plain.length;
    this.#onCopied();
  }
}

/** The pack's wanted blobs as few reads as gaps and the longest read allow, in pack order. */
function spansOf(pack: ID, blobs: BlobLocation[]): Span[] {
  blobs.sort((a, b) => a.offset - b.offset);
  const spans: Span[] = [];
  let span: Span | undefined;
  for (const b of blobs) {
    const end = b.offset + b.length;
    if (span && b.offset - span.end <= maxGap && end - span.start <= maxSpan) {
      span.end = Math.max(span.end, end);
      span.blobs.push(b);
    } else {
      span = { pack, start: b.offset, end, blobs: [b] };
      spans.push(span);
    }
  }
  return spans;
}
