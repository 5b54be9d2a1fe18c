// Where every blob lives, kept compact: a million blobs must fit in tens of megabytes, not hundreds, so ids are
// stored as raw bytes in typed arrays under an open-addressing hash table instead of a Map of hex strings.
// A blob may live in several packs (two backups writing one repository at once each store it): like restic's index,
// the table keeps every location, so check and prune see each pack whole; lookups answer the first one added.
import { bytesToID, type ID } from '../ids/id.ts';
import type { BlobType, PackedBlob, RawBlob } from '../pack/blob.ts';

export interface BlobLocation extends PackedBlob {
  pack: ID;
}

const empty = -1;
/** entries per chunk: columns grow by whole chunks, so growing never copies (or briefly doubles) what is stored */
const chunkBits = 16;
const chunkSize = 1 << chunkBits;
const chunkMask = chunkSize - 1;
/** the slot table is rebuilt twice as big past this load; linear probing stays short below it */
const maxLoad = 0.5;

/** One chunk's columns: ids as raw bytes, then pack number, offset, length and uncompressed length per entry. */
interface Chunk {
  ids: Buffer;
  nums: Uint32Array;
  type: Uint8Array;
}

function newChunk(entries: number): Chunk {
  return { ids: Buffer.alloc(entries * 32), nums: new Uint32Array(entries * 4), type: new Uint8Array(entries) };
}

export class BlobTable {
  #count = 0;
  /** entries the chunks hold room for */
  #cap: number;
  #chunks: Chunk[];
  #slots = new Int32Array(0);
  #packIDs: ID[] = [];
  #packNumber = new Map<ID, number>();
  #lastPack: ID | undefined;
  #lastPackNumber = 0;
  #spans: { count: number; type: number; byPack: Map<number, { start: number; end: number }> } | undefined;
  /** a looked-up id as bytes, reused so a lookup allocates nothing */
  readonly #key = Buffer.alloc(32);

  /** `initialCapacity`: entries expected; a small table starts small, a big one never needs to copy its columns. */
  constructor(initialCapacity = 1024) {
    const first = Math.max(16, Math.min(initialCapacity, chunkSize));
    this.#chunks = [newChunk(first)];
    this.#cap = first;
    this.#resizeSlots(initialCapacity);
  }

  get size(): number {
    return this.#count;
  }

  /**
   * Adds a blob's location; a blob already present elsewhere gains a second one. Returns false, adding nothing, when
   * this very location is already there (an index file listed twice, or read again after the fast reader gave up).
   */
  add(pack: ID, b: PackedBlob): boolean {
    return this.#add(pack, this.#bytes(b.id), 0, b);
  }

  /** `add` for a blob whose id is bytes, as another table hands them out: no hex on the way. */
  addRaw(pack: ID, b: RawBlob): boolean {
    return this.#add(pack, b.ids, b.at, b);
  }

  /** Calls `fn` for each entry in the order added, with one RawBlob refilled each time (see RawBlob). */
  forEachBlob(fn: (b: RawBlob) => void): void {
    const raw: RawBlob = { ids: Buffer.alloc(0), at: 0, type: 'data', offset: 0, length: 0, uncompressedLength: 0 };
    for (let i = 0; i < this.#count; i++) {
      const c = this.#chunks[i >>> chunkBits];
      const j = i & chunkMask;
      raw.ids = c.ids;
      raw.at = j * 32;
      raw.type = c.type[j] === 1 ? 'tree' : 'data';
      raw.offset = c.nums[j * 4 + 1];
      raw.length = c.nums[j * 4 + 2];
      raw.uncompressedLength = c.nums[j * 4 + 3];
      fn(raw);
    }
  }

  /** adds the blob whose id is the 32 bytes of `ids` from `at` */
  #add(
    pack: ID,
    ids: Uint8Array,
    at: number,
    b: { type: BlobType; offset: number; length: number; uncompressedLength: number },
  ): boolean {
    const t = b.type === 'tree' ? 1 : 0;
    if (this.#find(ids, at, t) !== empty && this.#holds(ids, at, t, pack, b)) return false;
    if (this.#count === this.#cap) this.#growChunks();
    if (this.#count + 1 > this.#slots.length * maxLoad) this.#resizeSlots(this.#count + 1);
    const i = this.#count++;
    const c = this.#chunks[i >>> chunkBits];
    const j = i & chunkMask;
    for (let k = 0; k < 32; k++) c.ids[j * 32 + k] = ids[at + k];
    c.nums[j * 4] = this.#packRef(pack);
    c.nums[j * 4 + 1] = b.offset;
    c.nums[j * 4 + 2] = b.length;
    c.nums[j * 4 + 3] = b.uncompressedLength;
    c.type[j] = t;
    this.#insertSlot(i);
    return true;
  }

  /** whether the table has the blob at exactly this location */
  #holds(
    ids: Uint8Array,
    at: number,
    t: number,
    pack: ID,
    b: { offset: number; length: number; uncompressedLength: number },
  ): boolean {
    const n = this.#packNumber.get(pack);
    if (n === undefined) return false;
    for (const i of this.#all(ids, at, t)) {
      const c = this.#chunks[i >>> chunkBits];
      const j = (i & chunkMask) * 4;
      if (
        c.nums[j] === n &&
        c.nums[j + 1] === b.offset &&
        c.nums[j + 2] === b.length &&
        c.nums[j + 3] === b.uncompressedLength
      )
        return true;
    }
    return false;
  }

  has(id: ID, type: BlobType): boolean {
    return this.#find(this.#bytes(id), 0, type === 'tree' ? 1 : 0) !== empty;
  }

  /**
   * The position (0..size-1) of the blob's first location, stable for the table's life: lets callers keep per-blob
   * marks in a typed array.
   */
  position(id: ID, type: BlobType): number {
    return this.#find(this.#bytes(id), 0, type === 'tree' ? 1 : 0);
  }

  /** The positions of every location of the blob, the first added first. */
  positions(id: ID, type: BlobType): number[] {
    return [...this.#all(this.#bytes(id), 0, type === 'tree' ? 1 : 0)];
  }

  /** Every location of the blob, the first added (the one `get` answers) first. */
  locations(id: ID, type: BlobType): BlobLocation[] {
    return this.positions(id, type).map((i) => this.#at(i));
  }

  at(position: number): BlobLocation {
    if (!Number.isInteger(position) || position < 0 || position >= this.#count)
      throw new RangeError(`no blob at position ${position}`);
    return this.#at(position);
  }

  /** The pack of the location at `position`, without the rest of `at`'s object. */
  packAt(position: number): ID {
    return this.#packIDs[this.#chunks[position >>> chunkBits].nums[(position & chunkMask) * 4]];
  }

  get(id: ID, type: BlobType): BlobLocation | undefined {
    const i = this.#find(this.#bytes(id), 0, type === 'tree' ? 1 : 0);
    return i === empty ? undefined : this.#at(i);
  }

  *entries(): Generator<BlobLocation> {
    for (let i = 0; i < this.#count; i++) yield this.#at(i);
  }

  /**
   * The byte range of a pack that holds its blobs of one type (from the first one's start to the last one's end),
   * from the index alone. Computed for every pack in one pass and kept until the table grows.
   */
  span(pack: ID, type: BlobType): { start: number; end: number } | undefined {
    const t = type === 'tree' ? 1 : 0;
    if (this.#spans?.count !== this.#count || this.#spans.type !== t)
      this.#spans = { count: this.#count, type: t, byPack: this.#computeSpans(t) };
    const n = this.#packNumber.get(pack);
    return n === undefined ? undefined : this.#spans.byPack.get(n);
  }

  #computeSpans(t: number): Map<number, { start: number; end: number }> {
    const byPack = new Map<number, { start: number; end: number }>();
    for (let i = 0; i < this.#count; i++) {
      const c = this.#chunks[i >>> chunkBits];
      const j = i & chunkMask;
      if (c.type[j] !== t) continue;
      const pack = c.nums[j * 4];
      const start = c.nums[j * 4 + 1];
      const end = start + c.nums[j * 4 + 2];
      const s = byPack.get(pack);
      if (!s) byPack.set(pack, { start, end });
      else {
        if (start < s.start) s.start = start;
        if (end > s.end) s.end = end;
      }
    }
    return byPack;
  }

  packs(): ID[] {
    return [...this.#packIDs];
  }

  #at(i: number): BlobLocation {
    const c = this.#chunks[i >>> chunkBits];
    const j = i & chunkMask;
    return {
      id: bytesToID(c.ids.subarray(j * 32, j * 32 + 32)),
      type: c.type[j] === 1 ? 'tree' : 'data',
      pack: this.#packIDs[c.nums[j * 4]],
      offset: c.nums[j * 4 + 1],
      length: c.nums[j * 4 + 2],
      uncompressedLength: c.nums[j * 4 + 3],
    };
  }

  #bytes(id: ID): Uint8Array {
    if (id.length !== 64 || this.#key.write(id, 'hex') !== 32)
      throw new RangeError(`${JSON.stringify(id)} is not a blob id (64 hex digits)`);
    return this.#key;
  }

  #packRef(pack: ID): number {
    // an index file lists a pack's blobs together
    if (pack === this.#lastPack) return this.#lastPackNumber;
    let n = this.#packNumber.get(pack);
    if (n === undefined) {
      n = this.#packIDs.length;
      this.#packIDs.push(pack);
      this.#packNumber.set(pack, n);
    }
    this.#lastPack = pack;
    this.#lastPackNumber = n;
    return n;
  }

  /** of the id that is the 32 bytes of `ids` from `at` */
  #hash(ids: Uint8Array, at: number, t: number): number {
    // ids are SHA-256 output, so their leading bytes are already uniformly distributed
    return ((ids[at] | (ids[at + 1] << 8) | (ids[at + 2] << 16) | (ids[at + 3] << 24)) ^ t) >>> 0;
  }

  /** The blob's first location: locations of one blob share a probe sequence, and entries enter it in order. */
  #find(ids: Uint8Array, at: number, t: number): number {
    const mask = this.#slots.length - 1;
    for (let s = this.#hash(ids, at, t) & mask; ; s = (s + 1) & mask) {
      const i = this.#slots[s];
      if (i === empty) return empty;
      if (this.#matches(i, ids, at, t)) return i;
    }
  }

  *#all(ids: Uint8Array, at: number, t: number): Generator<number> {
    const mask = this.#slots.length - 1;
    for (let s = this.#hash(ids, at, t) & mask; ; s = (s + 1) & mask) {
      const i = this.#slots[s];
      if (i === empty) return;
      if (this.#matches(i, ids, at, t)) yield i;
    }
  }

  #matches(i: number, id: Uint8Array, at: number, t: number): boolean {
    const c = this.#chunks[i >>> chunkBits];
    const j = i & chunkMask;
    if (c.type[j] !== t) return false;
    const ids = c.ids;
    const base = j * 32;
    for (let k = 0; k < 32; k++) if (ids[base + k] !== id[at + k]) return false;
    return true;
  }

  #insertSlot(i: number): void {
    const c = this.#chunks[i >>> chunkBits];
    const j = i & chunkMask;
    const mask = this.#slots.length - 1;
    let s = this.#hash(c.ids, j * 32, c.type[j]) & mask;
    while (this.#slots[s] !== empty) s = (s + 1) & mask;
    this.#slots[s] = i;
  }

  /** A small first chunk doubles until it is a whole chunk; after that whole chunks are added. */
  #growChunks(): void {
    const last = this.#chunks.length - 1;
    const size = this.#chunks[last].type.length;
    if (size < chunkSize) {
      const bigger = newChunk(Math.min(size * 2, chunkSize));
      const old = this.#chunks[last];
      bigger.ids.set(old.ids);
      bigger.nums.set(old.nums);
      bigger.type.set(old.type);
      this.#chunks[last] = bigger;
      this.#cap += bigger.type.length - size;
    } else {
      this.#chunks.push(newChunk(chunkSize));
      this.#cap += chunkSize;
    }
  }

  #resizeSlots(entries: number): void {
    let slots = 16;
    while (slots * maxLoad < entries) slots *= 2;
    this.#slots = new Int32Array(slots).fill(empty);
    for (let i = 0; i < this.#count; i++) this.#insertSlot(i);
  }
}
