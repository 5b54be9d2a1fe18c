// Collects prepared blobs into packs (data and trees apart), uploads full packs a few at a time and records them
// in index files as they complete, so a run killed at any moment re-uploads at most the packs that were in flight.
import type { Backend } from '../backend/backend.ts';
import type { MasterKey } from '../crypto/key.ts';
import { createHash } from 'node:crypto';
import type { ID } from '../ids/id.ts';
import type { BlobTable } from '../index/table.ts';
import { encodeIndexFile, type IndexPack } from '../index/index-file.ts';
import type { BlobType, PackedBlob } from '../pack/blob.ts';
import { entrySize, trailerSize, writeTrailer } from '../pack/header.ts';
import type { PreparedBlob } from '../pack/prepare.ts';
import { PackContents } from './pack-contents.ts';
import { release } from '../memory/release.ts';

export interface PackWriterOptions {
  /** a pack is closed once it holds this many bytes (restic's default is 16 MiB) or this many blobs */
  packSize?: number;
  blobsPerPack?: number;
  /** packSize for packs of trees */
  treePackSize?: number;
  /** packs uploading at once */
  uploads?: number;
  /** an index file is written after this many packs, blobs or milliseconds, whichever comes first */
  packsPerIndex?: number;
  blobsPerIndex?: number;
  indexIntervalMs?: number;
  /** false: only record new packs in the in-memory index (prune writes its own index files) */
  writeIndexFiles?: boolean;
}

export interface WriterStats {
  dataBlobs: number;
  treeBlobs: number;
  /** plaintext bytes of new blobs */
  dataAdded: number;
  /** stored bytes of new blobs */
  dataAddedPacked: number;
  packs: number;
  packBytes: number;
}

export interface RepoParts {
  backend: Backend;
  key: MasterKey;
  index: BlobTable;
  indexFiles: Set<ID>;
  saveUnpacked(type: 'index', plaintext: Uint8Array, signal?: AbortSignal): Promise<ID>;
}

/** The parts of a repository a writer needs; `index` may be swapped for another table. */
export function repoParts(repo: RepoParts): RepoParts {
  return {
    backend: repo.backend,
    key: repo.key,
    index: repo.index,
    indexFiles: repo.indexFiles,
    saveUnpacked: (type, plaintext, signal) => repo.saveUnpacked(type, plaintext, signal),
  };
}

/**
 * The pack's name is the SHA-256 of its bytes, hashed as they arrive, a megabyte at a time: hashing a whole pack
 * when it closed held the main thread while the workers waited on it for their next answers.
 */
const hashStep = 1 << 20;

/** A pack being filled: blobs are copied into one buffer that becomes the file, so nothing is assembled twice. */
class OpenPack {
  readonly blobs = new PackContents();
  size = 0;
  readonly #hash = createHash('sha256');
  /** bytes of the buffer the hash has seen */
  #hashed = 0;
  /** plaintext bytes of the header's entries so far */
  entryBytes = 0;
  #buf: Buffer;
  /** the most a pack can need (see PackWriter): growing by doubling stops there */
  readonly #capacity: number;

  constructor(buf: Buffer, capacity: number) {
    this.#buf = buf;
    this.#capacity = capacity;
  }

  /** The buffer, to free or reuse once the pack is stored. */
  get buffer(): Buffer {
    return this.#buf;
  }

  append(bytes: Uint8Array): void {
    this.#room(bytes.length);
    this.#buf.set(bytes, this.size);
    this.size += bytes.length;
    if (this.size - this.#hashed >= hashStep) this.#hashUpToSize();
  }

  #hashUpToSize(): void {
    this.#hash.update(this.#buf.subarray(this.#hashed, this.size));
    this.#hashed = this.size;
  }

  /** The pack's id, once its trailer is written; nothing may be appended after. */
  id(): ID {
    this.#hashUpToSize();
    return this.#hash.digest('hex');
  }

  /** Seals the header of the blobs appended so far after them. */
  appendTrailer(key: MasterKey): void {
    this.#room(trailerSize(this.entryBytes));
    this.size += writeTrailer(key, this.blobs, this.#buf, this.size);
  }

  #room(bytes: number): void {
    if (this.size + bytes <= this.#buf.length) return;
    // a 16 MiB tree pack doubled into 32 MiB for its last few trees
    const bigger = Buffer.allocUnsafe(Math.max(Math.min(this.#buf.length * 2, this.#capacity), this.size + bytes));
    this.#buf.copy(bigger, 0, 0, this.size);
    release(this.#buf);
    this.#buf = bigger;
  }

  /** Bytes the pack would take with one more blob of `length` stored bytes and header `entry` bytes. */
  sizeWith(length: number, entry: number): number {
    return this.size + length + trailerSize(this.entryBytes + entry);
  }

  contents(): Uint8Array {
    return this.#buf.subarray(0, this.size);
  }
}

/** a pack of more blobs than this (1.7 KB each on average, or less) is one of tiny blobs: see PackWriter.#spare */
const spareBelowBlobs = 10_000;

export class PackWriter {
  readonly stats: WriterStats = {
    dataBlobs: 0,
    treeBlobs: 0,
    dataAdded: 0,
    dataAddedPacked: 0,
    packs: 0,
    packBytes: 0,
  };
  readonly #repo: RepoParts;
  readonly #packSize: number;
  readonly #treePackSize: number;
  readonly #blobsPerPack: number;
  readonly #uploads: number;
  readonly #packsPerIndex: number;
  readonly #blobsPerIndex: number;
  readonly #indexIntervalMs: number;
  readonly #writeIndexFiles: boolean;
  readonly #open: Partial<Record<BlobType, OpenPack>> = {};
  /** packs between their last blob and their index entries */
  readonly #uploading = new Set<OpenPack>();
  /** blobs claimed and being prepared, not yet in a pack: a few batches' worth */
  readonly #claimed = new Set<string>();
  readonly #packCapacity: number;
  readonly #inFlight = new Set<Promise<void>>();
  /** a stored data pack's buffer, for the next data pack (see #dataBuffer) */
  #spareBuffer: Buffer | undefined;
  #unindexed: IndexPack[] = [];
  #firstUnindexedAt = 0;
  #indexWrite: Promise<void> = Promise.resolve();
  #failure: unknown;

  constructor(repo: RepoParts, opts: PackWriterOptions = {}) {
    this.#repo = repo;
    this.#packSize = opts.packSize ?? 16 << 20;
    // a pack closes at packSize, or earlier when the next blob and the header would not fit in this: so buffers
    // are never outgrown (a copy into one twice as big)
    this.#packCapacity = this.#packSize + (1 << 20);
    // a folder's tree is stored when its walk ends, so a tree pack fills over a long stretch of a backup, holding
    // its pages all along, up to a backup's peak
    this.#treePackSize = Math.min(opts.treePackSize ?? 4 << 20, this.#packSize);
    // each pack in flight holds a buffer of about packSize
    this.#uploads = opts.uploads ?? 2;
    this.#packsPerIndex = opts.packsPerIndex ?? 32;
    // an index file is built whole in memory, three times over (JSON, compressed, sealed), so one covering every
    // pack of tiny files a backup closes in a few seconds lifts its peak. Restic caps its own at 50k blobs (150k
    // compressed). A pack is never split across index files.
    this.#blobsPerIndex = opts.blobsPerIndex ?? 50_000;
    // so one pack fits in an index file of that cap: 16 MiB of 100-byte files is 105k blobs, whose index file and
    // header made the largest transients of a backup of tiny files
    this.#blobsPerPack = opts.blobsPerPack ?? this.#blobsPerIndex;
    this.#indexIntervalMs = opts.indexIntervalMs ?? 5000;
    this.#writeIndexFiles = opts.writeIndexFiles ?? true;
  }

  /** True when the blob is stored or on its way; the caller then need not prepare it. */
  has(type: BlobType, id: ID): boolean {
    if (this.#claimed.has(type + id) || this.#repo.index.has(id, type)) return true;
    if (this.#open[type]?.blobs.has(id, type)) return true;
    for (const pack of this.#uploading) if (pack.blobs.has(id, type)) return true;
    return false;
  }

  /**
   * Claims a blob for saving: returns false when it is already stored or claimed, so parallel producers of the
   * same content prepare it once.
   */
  claim(type: BlobType, id: ID): boolean {
    if (this.has(type, id)) return false;
    this.#claimed.add(type + id);
    return true;
  }

  /** Adds a prepared blob (claimed before); waits when too many packs are uploading. */
  async add(b: PreparedBlob, plaintextLength: number, signal?: AbortSignal): Promise<void> {
    this.#throwIfFailed();
    const packed: PackedBlob = {
      id: b.id,
      type: b.type,
      offset: 0,
      length: b.sealed.length,
      uncompressedLength: b.uncompressedLength,
    };
    const entry = entrySize(packed);
    const full = this.#open[b.type];
    if (full && full.blobs.length > 0 && full.sizeWith(packed.length, entry) > this.#packCapacity) {
      delete this.#open[b.type];
      await this.#startUpload(full, signal);
    }
    // tree packs fill slowly and are often small at the end: they start small and grow. A fresh buffer takes memory
    // only as it fills, where a reused one would hold a whole pack's pages from the start.
    const pack = (this.#open[b.type] ??= new OpenPack(
      b.type === 'tree' ? Buffer.allocUnsafe(1 << 20) : this.#dataBuffer(),
      this.#packCapacity,
    ));
    packed.offset = pack.size;
    this.#claimed.delete(b.type + b.id);
    if (!pack.blobs.add(packed)) return;
    pack.entryBytes += entry;
    pack.append(b.sealed);
    if (b.type === 'data') this.stats.dataBlobs++;
    else this.stats.treeBlobs++;
    this.stats.dataAdded += plaintextLength;
    this.stats.dataAddedPacked += b.sealed.length;
    // the header counts: a pack of 100k tiny blobs has 4 MiB of it, which overflowed the buffer into one twice as big
    if (
      pack.sizeWith(0, 0) >= (b.type === 'tree' ? this.#treePackSize : this.#packSize) ||
      pack.blobs.length >= this.#blobsPerPack
    ) {
      delete this.#open[b.type];
      await this.#startUpload(pack, signal);
    }
  }

  /**
   * A buffer for a data pack: one a stored pack left, if any. Data packs fill in a second or two, so a spare's
   * pages are not held for long; a fresh buffer is mapped anew and faulted in page by page as blobs are copied in,
   * and zeroing those pages cost the main thread as much as the copying.
   */
  #dataBuffer(): Buffer {
    const buf = this.#spareBuffer ?? Buffer.allocUnsafe(this.#packCapacity);
    this.#spareBuffer = undefined;
    return buf;
  }

  /**
   * Keeps a stored pack's buffer for the next pack: one at most, and not from a pack of tiny blobs. A backup of tiny
   * files is bound by memory (its index and trees), not by copying, and a spare raised its peak.
   */
  #spare(pack: OpenPack): void {
    const buf = pack.buffer;
    if (buf.length === this.#packCapacity && pack.blobs.length < spareBelowBlobs && !this.#spareBuffer)
      this.#spareBuffer = buf;
    else release(buf);
  }

  /** Uploads the partial packs, waits for every upload and writes the remaining index entries. */
  async flush(signal?: AbortSignal): Promise<void> {
    for (const type of ['data', 'tree'] as const) {
      const pack = this.#open[type];
      if (!pack) continue;
      delete this.#open[type];
      await this.#startUpload(pack, signal);
    }
    await Promise.all(this.#inFlight);
    if (this.#spareBuffer) release(this.#spareBuffer);
    this.#spareBuffer = undefined;
    this.#throwIfFailed();
    await this.#writeIndex(signal);
  }

  async #startUpload(pack: OpenPack, signal?: AbortSignal): Promise<void> {
    while (this.#inFlight.size >= this.#uploads) {
      await Promise.race(this.#inFlight);
      this.#throwIfFailed();
    }
    this.#uploading.add(pack);
    const p = this.#upload(pack, signal).catch((err: unknown) => {
      this.#failure ??= err;
    });
    this.#inFlight.add(p);
    void p.finally(() => this.#inFlight.delete(p));
  }

  async #upload(pack: OpenPack, signal?: AbortSignal): Promise<void> {
    pack.appendTrailer(this.#repo.key);
    const bytes = pack.contents();
    const id = pack.id();
    await this.#repo.backend.save({ type: 'pack', name: id }, bytes, signal, id);
    this.stats.packs++;
    this.stats.packBytes += bytes.length;
    // after this, `bytes` (a view of the buffer) is empty or another pack's
    this.#spare(pack);
    pack.blobs.forEachBlob((b) => this.#repo.index.addRaw(id, b));
    this.#uploading.delete(pack);
    if (!this.#writeIndexFiles) return;
    if (this.#unindexed.length === 0) this.#firstUnindexedAt = Date.now();
    this.#unindexed.push({ id, blobs: pack.blobs });
    const unindexedBlobs = this.#unindexed.reduce((n, p) => n + p.blobs.length, 0);
    if (
      this.#unindexed.length >= this.#packsPerIndex ||
      unindexedBlobs >= this.#blobsPerIndex ||
      Date.now() - this.#firstUnindexedAt >= this.#indexIntervalMs
    ) {
      await this.#writeIndex(signal);
    }
  }

  /** Index writes are serialised so each pack is recorded exactly once. */
  #writeIndex(signal?: AbortSignal): Promise<void> {
    const next = this.#indexWrite.then(async () => {
      if (this.#unindexed.length === 0) return;
      const packs = this.#unindexed;
      this.#unindexed = [];
      try {
        const json = encodeIndexFile({ supersedes: [], packs });
        const saved = this.#repo.saveUnpacked('index', json, signal);
        // sealed by now (see saveUnpacked): the JSON (7.5 MB for a pack of 50k tiny files) need not wait for the upload
        release(json);
        const id = await saved;
        this.#repo.indexFiles.add(id);
      } catch (err) {
        this.#unindexed = packs.concat(this.#unindexed);
        throw err;
      }
    });
    // a failed write is reported to its caller; the packs stay queued for the next one
    this.#indexWrite = next.catch(() => undefined);
    return next;
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure;
  }
}
