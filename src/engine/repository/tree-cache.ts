// Trees are read a pack range at a time and kept, sealed, in a bounded cache: walking a snapshot (restore, the
// parent of an incremental backup, check) then costs a few reads per tree pack instead of one per directory.
// Packs are immutable, so a cached range never goes stale; a pruned pack's range simply stops being asked for.
import type { Backend } from '../backend/backend.ts';
import type { ID } from '../ids/id.ts';
import type { BlobLocation, BlobTable } from '../index/table.ts';

interface CachedRange {
  pack: ID;
  start: number;
  bytes: Uint8Array;
}

export interface TreeCacheOptions {
  /** bytes of sealed trees kept */
  capacity?: number;
  /** the longest read; a tree pack with more trees is read in windows of this size around the tree asked for */
  maxRead?: number;
}

export class TreeCache {
  readonly #backend: Backend;
  readonly #index: BlobTable;
  readonly #capacity: number;
  readonly #maxRead: number;
  /** least recently used first */
  readonly #ranges: CachedRange[] = [];
  #bytes = 0;
  /** reads in flight, so trees of one range asked for together share its read */
  readonly #loading = new Map<string, Promise<CachedRange>>();
  /** reads issued, for tests and benchmarks */
  readsIssued = 0;

  constructor(backend: Backend, index: BlobTable, opts: TreeCacheOptions = {}) {
    this.#backend = backend;
    this.#index = index;
    // a walk moves forward through the tree packs, so a few windows serve it: larger ones held mostly trees already
    // walked (a restore of many files grew by a window at a time through its first stretch)
    this.#capacity = opts.capacity ?? 16 << 20;
    this.#maxRead = opts.maxRead ?? 4 << 20;
  }

  /** The sealed bytes of the tree blob at `loc`. */
  async sealed(loc: BlobLocation, signal?: AbortSignal): Promise<Uint8Array> {
    const range = this.#find(loc) ?? (await this.#load(loc, signal));
    const from = loc.offset - range.start;
    return range.bytes.subarray(from, from + loc.length);
  }

  #find(loc: BlobLocation): CachedRange | undefined {
    const i = this.#ranges.findIndex(
      (r) => r.pack === loc.pack && r.start <= loc.offset && loc.offset + loc.length <= r.start + r.bytes.length,
    );
    if (i < 0) return undefined;
    const [r] = this.#ranges.splice(i, 1);
    this.#ranges.push(r);
    return r;
  }

  async #load(loc: BlobLocation, signal?: AbortSignal): Promise<CachedRange> {
    const { start, end } = this.#window(loc);
    const key = `${loc.pack}:${start}`;
    let loading = this.#loading.get(key);
    if (!loading) {
      this.readsIssued++;
      loading = this.#backend
        .load({ type: 'pack', name: loc.pack }, start, end - start, signal)
        .then((bytes) => this.#keep({ pack: loc.pack, start, bytes }))
        .finally(() => this.#loading.delete(key));
      this.#loading.set(key, loading);
    }
    return loading;
  }

  /** The pack's tree range, or a window of it holding the wanted tree when the range is too long for one read. */
  #window(loc: BlobLocation): { start: number; end: number } {
    const span = this.#index.span(loc.pack, 'tree') ?? { start: loc.offset, end: loc.offset + loc.length };
    if (span.end - span.start <= this.#maxRead) return span;
    // windows start on a fixed grid, so neighbours find one cached rather than loading an overlapping one; each
    // reaches an eighth past the next grid line, so a tree crossing that line is usually inside too
    const start = loc.offset - ((loc.offset - span.start) % this.#maxRead);
    const end = Math.min(span.end, Math.max(start + this.#maxRead + this.#maxRead / 8, loc.offset + loc.length));
    return { start, end };
  }

  #keep(r: CachedRange): CachedRange {
    if (r.bytes.length > this.#capacity) return r;
    this.#ranges.push(r);
    this.#bytes += r.bytes.length;
    while (this.#bytes > this.#capacity) this.#bytes -= this.#ranges.shift()!.bytes.length;
    return r;
  }
}
