// Where every blob lives, kept compact: a million blobs must fit in tens of megabytes, not hundreds, so ids are
// stored as raw bytes in typed arrays under an open-addressing hash table instead of a Map of hex strings.
import { bytesToID, idToBytes, type ID } from '../ids/id.ts';
import type { BlobType, PackedBlob } from '../pack/blob.ts';

export interface BlobLocation extends PackedBlob {
  pack: ID;
}

const empty = -1;

export class BlobTable {
  #count = 0;
  #cap = 0;
  #ids = new Uint8Array(0);
  #pack = new Int32Array(0);
  #offset = new Uint32Array(0);
  #length = new Uint32Array(0);
  #ulen = new Uint32Array(0);
  #type = new Uint8Array(0);
  #slots = new Int32Array(0);
  #packIDs: ID[] = [];
  #packNumber = new Map<ID, number>();
  #spans: { count: number; type: number; byPack: Map<number, { start: number; end: number }> } | undefined;

  constructor(initialCapacity = 1024) {
    this.#grow(initialCapacity);
  }

  get size(): number {
    return this.#count;
  }

  /** Adds a blob; a blob already present (same id and type) keeps its first location. Returns whether it was new. */
  add(pack: ID, b: PackedBlob): boolean {
    const id = idToBytes(b.id);
    const t = b.type === 'tree' ? 1 : 0;
    if (this.#find(id, t) !== empty) return false;
    if (this.#count * 2 >= this.#cap) this.#grow(this.#cap * 2);
    const i = this.#count++;
    this.#ids.set(id, i * 32);
    this.#pack[i] = this.#packRef(pack);
    this.#offset[i] = b.offset;
    this.#length[i] = b.length;
    this.#ulen[i] = b.uncompressedLength;
    this.#type[i] = t;
    this.#insertSlot(i);
    return true;
  }

  has(id: ID, type: BlobType): boolean {
    return this.#find(idToBytes(id), type === 'tree' ? 1 : 0) !== empty;
  }

  /** The entry's position (0..size-1), stable for the table's life: lets callers keep per-blob marks in a typed array. */
  position(id: ID, type: BlobType): number {
    return this.#find(idToBytes(id), type === 'tree' ? 1 : 0);
  }

  at(position: number): BlobLocation {
    if (position < 0 || position >= this.#count) throw new RangeError(`no blob at position ${position}`);
    return this.#at(position);
  }

  get(id: ID, type: BlobType): BlobLocation | undefined {
    const i = this.#find(idToBytes(id), type === 'tree' ? 1 : 0);
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
    if (this.#spans?.count !== this.#count || this.#spans.type !== t) this.#spans = { count: this.#count, type: t, byPack: this.#computeSpans(t) };
    const n = this.#packNumber.get(pack);
    return n === undefined ? undefined : this.#spans.byPack.get(n);
  }

  #computeSpans(t: number): Map<number, { start: number; end: number }> {
    const byPack = new Map<number, { start: number; end: number }>();
    for (let i = 0; i < this.#count; i++) {
      if (this.#type[i] !== t) continue;
      const start = this.#offset[i];
      const end = start + this.#length[i];
      const s = byPack.get(this.#pack[i]);
      if (!s) byPack.set(this.#pack[i], { start, end });
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
    return {
      id: bytesToID(this.#ids.subarray(i * 32, i * 32 + 32)),
      type: this.#type[i] === 1 ? 'tree' : 'data',
      pack: this.#packIDs[this.#pack[i]],
      offset: this.#offset[i],
      length: this.#length[i],
      uncompressedLength: this.#ulen[i],
    };
  }

  #packRef(pack: ID): number {
    let n = this.#packNumber.get(pack);
    if (n === undefined) {
      n = this.#packIDs.length;
      this.#packIDs.push(pack);
      this.#packNumber.set(pack, n);
    }
    return n;
  }

  #hash(id: Uint8Array, t: number): number {
    // ids are SHA-256 output, so their leading bytes are already uniformly distributed
    return ((id[0] | (id[1] << 8) | (id[2] << 16) | (id[3] << 24)) ^ t) >>> 0;
  }

  #find(id: Uint8Array, t: number): number {
    const mask = this.#slots.length - 1;
    for (let s = this.#hash(id, t) & mask; ; s = (s + 1) & mask) {
      const i = this.#slots[s];
      if (i === empty) return empty;
      if (this.#type[i] === t && this.#sameID(i, id)) return i;
    }
  }

  #sameID(i: number, id: Uint8Array): boolean {
    const base = i * 32;
    for (let k = 0; k < 32; k++) if (this.#ids[base + k] !== id[k]) return false;
    return true;
  }

  #insertSlot(i: number): void {
    const mask = this.#slots.length - 1;
    const id = this.#ids.subarray(i * 32, i * 32 + 32);
    let s = this.#hash(id, this.#type[i]) & mask;
    while (this.#slots[s] !== empty) s = (s + 1) & mask;
    this.#slots[s] = i;
  }

  #grow(cap: number): void {
    const resize = <T extends Uint8Array | Int32Array | Uint32Array>(old: T, make: (n: number) => T, n: number): T => {
      const next = make(n);
      next.set(old.subarray(0, Math.min(old.length, n)) as never);
      return next;
    };
    this.#cap = cap;
    this.#ids = resize(this.#ids, (n) => new Uint8Array(n), cap * 32);
    this.#pack = resize(this.#pack, (n) => new Int32Array(n), cap);
    this.#offset = resize(this.#offset, (n) => new Uint32Array(n), cap);
    this.#length = resize(this.#length, (n) => new Uint32Array(n), cap);
    this.#ulen = resize(this.#ulen, (n) => new Uint32Array(n), cap);
    this.#type = resize(this.#type, (n) => new Uint8Array(n), cap);
    let slots = 1;
    while (slots < cap * 2) slots <<= 1;
    this.#slots = new Int32Array(slots).fill(empty);
    for (let i = 0; i < this.#count; i++) this.#insertSlot(i);
  }
}
