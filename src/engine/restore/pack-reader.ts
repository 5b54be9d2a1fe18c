// Reads data blobs for a restore by pack ranges instead of one request per blob: requests that arrive while reads
// are busy (or in the same turn of the event loop) are grouped by pack, and neighbouring blobs of one pack are
// fetched with a single ranged read. Restoring many small files thus costs a few reads per pack, not one per file.
// A read also reaches ahead through the pack's data (up to the longest read), and keeps what it read in a small
// cache: a restore walks files in the order a backup packed them, so the blobs asked for next are usually there, and
// a pack costs one or two reads however few files are in flight at once. Callers ask for all the blobs they will
// need at once and a budget bounds the plaintext handed over and not yet done with, so each pack read serves every
// file that wants something from it (as restic's restorer plans by pack), not only the file that asked first.
import type { Backend } from '../backend/backend.ts';
import type { ID } from '../ids/id.ts';
import type { BlobLocation } from '../index/table.ts';
import { plainLength } from '../pack/blob.ts';
import type { OpenBlobs } from './open-blobs.ts';
import { apart, covers, cutRuns, sameBlob, share, type CachedRange, type Range, type Wanted } from './wanted-blobs.ts';
import type { ByteBudget } from './byte-budget.ts';
import { release } from '../memory/release.ts';
import { ShortObjectError } from '../backend/errors.ts';
import { BlobPastPackEndError, SharedOffsetError } from '../repository/errors.ts';

/** Where a pack's data blobs lie (from the index), so a read may reach ahead without passing their end. */
export type DataSpan = (pack: ID) => { start: number; end: number } | undefined;

export interface PackReaderOptions {
  /** ranged reads in flight */
  reads?: number;
  /** the longest read, in bytes (a single longer blob is still read whole) */
  maxRead?: number;
  /** bytes of unwanted blobs between two wanted ones that are read through rather than starting a new read */
  maxGap?: number;
  /** with `span`: bytes of sealed reads kept for the blobs asked for next (0: reads reach no further than asked) */
  cache?: number;
  span?: DataSpan;
  /**
   * Plaintext of the blobs being read or handed over and not yet given back through done(): a read (or a serving from
   * what is kept) starts only once its blobs' plaintext is free, so asking for many blobs at once costs no more
   * memory than the budget. A run of blobs is cut at half of it, so that two reads of text (3-4 times their size in
   * plaintext) can be in flight; cut at a quarter, restores of large files were slower.
   */
  budget?: ByteBudget;
  signal?: AbortSignal;
}

export class PackReader {
  readonly #backend: Backend;
  readonly #open: OpenBlobs;
  readonly #reads: number;
  readonly #maxRead: number;
  readonly #maxGap: number;
  readonly #cacheCapacity: number;
  readonly #span: DataSpan | undefined;
  readonly #budget: ByteBudget | undefined;
  /** the most plaintext one read (or serving) hands over */
  readonly #runPlain: number;
  readonly #signal: AbortSignal | undefined;
  /** wanted blobs by pack (then by offset); packs in the order their oldest wanted blob arrived */
  readonly #pending = new Map<ID, Map<number, Wanted>>();
  /** reads in flight: blobs they will bring wait for them rather than costing a read of their own */
  readonly #inFlight: Range[] = [];
  /** least recently used first */
  readonly #cache: CachedRange[] = [];
  /** each pack's data span, asked for once (the index computes spans for all packs at a time) */
  readonly #spans = new Map<ID, { start: number; end: number } | undefined>();
  /**
   * reads whose blobs were decrypted in place (here, or on another thread and moved back): the views still out and
   * the plaintext budget they hold
   */
  readonly #pinned = new Map<ArrayBufferLike, { views: number; plain: number }>();
  /** the sizes of packs found shorter than the index said: reads of them stop at their end */
  readonly #sizes = new Map<ID, number>();
  #cacheBytes = 0;
  #scheduled = false;
  /** reads issued, for tests and benchmarks */
  readsIssued = 0;

  constructor(backend: Backend, open: OpenBlobs, opts: PackReaderOptions = {}) {
    this.#backend = backend;
    this.#open = open;
    this.#reads = opts.reads ?? 4;
    this.#maxRead = opts.maxRead ?? 8 << 20;
    this.#maxGap = opts.maxGap ?? 256 << 10;
    this.#cacheCapacity = opts.span ? (opts.cache ?? 0) : 0;
    this.#span = opts.span;
    this.#budget = opts.budget;
    this.#runPlain = opts.budget ? opts.budget.capacity / 2 : Infinity;
    this.#signal = opts.signal;
    // requests still waiting for a read would otherwise never settle
    this.#signal?.addEventListener('abort', () => this.#failPending(this.#signal!.reason), { once: true });
  }

  /** The memory the kept reads hold (whole buffers, not only the parts kept), for tests and benchmarks. */
  get heldBytes(): number {
    return [...new Set(this.#cache.map((c) => c.bytes.buffer))].reduce((n, b) => n + b.byteLength, 0);
  }

  /** The plaintext of a blob at `loc`, the caller's own (two callers of one blob get a copy each); resolves once the read holding it is done. */
  read(loc: BlobLocation): Promise<Uint8Array> {
    return this.#want(loc, false);
  }

  /**
   * A blob at `loc` as the pack stores it, for a caller that opens and verifies it elsewhere: a view of the read
   * holding it, which it keeps alive, so it is meant to be copied or used soon.
   */
  readSealed(loc: BlobLocation): Promise<Uint8Array> {
    return this.#want(loc, true);
  }

  /**
   * Gives back the budget of a blob handed over (once per read or readSealed that resolved), once done with it
   * (`data`: the plaintext it was given). A plaintext decrypted in place holds its whole read: the budget of the
   * read's plaintexts comes back, and its memory goes, once the last of them is done with.
   */
  done(loc: BlobLocation, data?: Uint8Array): void {
    const pin = data && this.#pinned.get(data.buffer);
    if (pin) {
      if (--pin.views > 0) return;
      this.#pinned.delete(data.buffer);
      // the writer's release() of a view that was the whole read freed it already
      if (!(data.buffer as ArrayBuffer).detached) (data.buffer as ArrayBuffer).transfer(0);
      this.#budget?.give(pin.plain);
    } else this.#budget?.give(plainLength(loc));
    this.#schedule();
  }

  #want(loc: BlobLocation, sealed: boolean): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      this.#signal?.throwIfAborted();
      let byOffset = this.#pending.get(loc.pack);
      if (!byOffset) {
        byOffset = new Map();
        this.#pending.set(loc.pack, byOffset);
      }
      const wanted = byOffset.get(loc.offset);
      // a waiter joins the blob wanted at its offset: it must be that very blob, or it would be handed the other's
      // plaintext, checked against the other's id
      if (wanted && !sameBlob(wanted.loc, loc))
        throw new SharedOffsetError(loc.pack, loc.id, wanted.loc.id, loc.offset);
      if (wanted) wanted.waiters.push({ sealed, resolve, reject });
      else byOffset.set(loc.offset, { loc, waiters: [{ sealed, resolve, reject }] });
      this.#schedule();
    });
  }

  /** Dispatch waits for the end of this turn, so the requests of many files arriving together share reads. */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#dispatch();
    });
  }

  /**
   * Serves what the cache holds, then starts reads while slots are free. Blobs a read in flight will bring wait for
   * it. With a read already in flight, only a run that fills a read is started: smaller ones wait, so the requests
   * arriving meanwhile join them instead of costing a read each.
   */
  #dispatch(): void {
    for (const [pack, byOffset] of this.#pending) {
      // once the budget runs out, done() dispatches again: packs wait their turn rather than being overtaken
      if (!this.#serveCached(pack, byOffset)) return;
      while (byOffset.size > 0 && this.#inFlight.length < this.#reads) {
        const run = this.#takeRun(byOffset, this.#inFlight.length > 0);
        if (!run) break;
        if (!this.#reserve(run)) return;
        for (const w of run) byOffset.delete(w.loc.offset);
        const range = this.#rangeOf(pack, run);
        this.#inFlight.push(range);
        this.readsIssued++;
        void this.#fetch(range, run).finally(() => {
          this.#inFlight.splice(this.#inFlight.indexOf(range), 1);
          this.#schedule();
        });
      }
      if (byOffset.size === 0) this.#pending.delete(pack);
    }
  }

  /** Takes the budget for the plaintext a run hands over. */
  #reserve(run: Wanted[]): boolean {
    return this.#budget?.tryTake(run.reduce((n, w) => n + share(w), 0)) ?? true;
  }

  #failPending(reason: unknown): void {
    const err = reason instanceof Error ? reason : new Error('restore canceled');
    for (const byOffset of this.#pending.values())
      for (const w of byOffset.values()) for (const waiter of w.waiters) waiter.reject(err);
    this.#pending.clear();
  }

  /** Opens the wanted blobs a cached read holds, grouped by read; false once the budget has run out. */
  #serveCached(pack: ID, byOffset: Map<number, Wanted>): boolean {
    if (this.#cache.length === 0) return true;
    const byRange = new Map<CachedRange, Wanted[]>();
    for (const w of byOffset.values()) {
      const r = this.#cache.find((c) => covers(c, w.loc));
      if (!r) continue;
      const group = byRange.get(r);
      if (group) group.push(w);
      else byRange.set(r, [w]);
    }
    for (const [r, wanted] of byRange) {
      // most recently used last
      this.#cache.splice(this.#cache.indexOf(r), 1);
      this.#cache.push(r);
      // in pack order, as a read's blobs are: openers group neighbours by their offsets
      wanted.sort((a, b) => a.loc.offset - b.loc.offset);
      for (const run of cutRuns(wanted, this.#runPlain)) {
        if (!this.#reserve(run)) return false;
        for (const w of run) byOffset.delete(w.loc.offset);
        // the kept read serves later blobs too: nothing is decrypted over it
        void this.#deliver(pack, run, r.bytes, r.start, false);
      }
    }
    return true;
  }

  /**
   * The wanted blobs from the lowest offset on that one read covers (leaving those a read in flight will bring), up
   * to `runPlain` of plaintext; when `onlyFull`, only if they fill half a read or more (or the run ends at a gap too
   * wide to bridge, or at its plaintext).
   */
  #takeRun(byOffset: Map<number, Wanted>, onlyFull: boolean): Wanted[] | undefined {
    const sorted = [...byOffset.values()]
      .filter((w) => !this.#inFlight.some((r) => covers(r, w.loc)))
      .sort((a, b) => a.loc.offset - b.loc.offset);
    if (sorted.length === 0) return undefined;
    const run = [sorted[0]];
    const start = sorted[0].loc.offset;
    let end = start + sorted[0].loc.length;
    let plain = share(sorted[0]);
    let closed = false;
    for (let i = 1; i < sorted.length; i++) {
      const { offset, length } = sorted[i].loc;
      const n = share(sorted[i]);
      if (offset - end > this.#maxGap || offset + length - start > this.#maxRead || plain + n > this.#runPlain) {
        closed = true;
        break;
      }
      run.push(sorted[i]);
      end = Math.max(end, offset + length);
      plain += n;
    }
    if (onlyFull && !closed && end - start < this.#maxRead / 2) return undefined;
    return run;
  }

  /**
   * The bytes a read of `run` covers: the run itself, reaching ahead through the pack's data when caching: up to the
   * longest read (or the pack's end, when little more), and not into bytes already cached or being read.
   */
  #rangeOf(pack: ID, run: Wanted[]): Range {
    const start = run[0].loc.offset;
    const end = run.reduce((e, w) => Math.max(e, w.loc.offset + w.loc.length), start);
    const span = this.#cacheCapacity > 0 ? this.#spanOf(pack) : undefined;
    if (!span) return { pack, start, end };
    let limit = start + this.#maxRead;
    // a pack closes after the blob that overflows it, so many run a little past the longest read
    if (span.end - limit < this.#maxRead / 4) limit = span.end;
    for (const r of [...this.#cache, ...this.#inFlight])
      if (r.pack === pack && r.start >= end) limit = Math.min(limit, r.start);
    return { pack, start, end: Math.max(end, Math.min(span.end, limit)) };
  }

  #spanOf(pack: ID): { start: number; end: number } | undefined {
    if (!this.#spans.has(pack)) this.#spans.set(pack, this.#span!(pack));
    const span = this.#spans.get(pack);
    const size = this.#sizes.get(pack);
    return span && size !== undefined ? { start: span.start, end: Math.min(span.end, size) } : span;
  }

  async #fetch(range: Range, run: Wanted[]): Promise<void> {
    let bytes: Uint8Array;
    try {
      bytes = await this.#backend.load(
        { type: 'pack', name: range.pack },
        range.start,
        range.end - range.start,
        this.#signal,
      );
    } catch (err) {
      if (err instanceof ShortObjectError) return this.#shortPack(range.pack, run, err.size);
      for (const w of run) this.#fail(w, err as Error);
      return;
    }
    const asked = run.reduce((e, w) => Math.max(e, w.loc.offset + w.loc.length), range.start);
    const keptView = asked < range.end && this.#keep(range, bytes, asked);
    // the bytes up to `asked` are this read's alone (the cache keeps only what lies past it); but a read kept as a view
    // outlives its blobs, and their plaintext would then stay beyond the budget's account, in copies of their own;
    // nor is a read that shares its memory (Node's pool of small Buffers), which must never be freed
    const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
    const handed = await this.#deliver(range.pack, run, bytes, range.start, !keptView && whole);
    // once its blobs are opened, nothing refers to a read that handed out no sealed view and left no view in the
    // cache but the plaintexts decrypted in place: its memory goes now (or once the last of those is written), not at
    // the collection its size would otherwise bring on
    if (keptView || handed.sealed) return;
    // (a read whose plaintexts are views of it was pinned as they were handed over)
    if (handed.views === 0) release(bytes);
  }

  /**
   * A read ran past the end of its pack, as the index placed a blob (or the pack's data) there: the blobs that lie
   * past the end fail naming themselves, and the others wait for a read that stops at the end.
   */
  #shortPack(pack: ID, run: Wanted[], size: number): void {
    this.#sizes.set(pack, size);
    for (const w of run) {
      const { offset, length, id } = w.loc;
      if (offset + length > size) {
        this.#fail(w, new BlobPastPackEndError(pack, id, offset, length, size));
        continue;
      }
      w.waiters.forEach(() => this.done(w.loc));
      const byOffset = this.#pending.get(pack) ?? new Map<number, Wanted>();
      this.#pending.set(pack, byOffset);
      const again = byOffset.get(offset);
      if (again) again.waiters.push(...w.waiters);
      else byOffset.set(offset, w);
    }
  }

  /** Fails every waiter of `w`, giving back the budget each took (nobody will be done with a blob that never came). */
  #fail(w: Wanted, err: Error): void {
    for (const waiter of w.waiters) {
      this.done(w.loc);
      waiter.reject(err);
    }
  }

  /**
   * Hands the blobs of a read to those who want them sealed, then opens the rest: in place when `own` (nobody else
   * reads these bytes), no blob was handed out sealed and none overlaps another (a lying index), since decrypting
   * one blob over another's bytes would fail that one. Says whether sealed views of `bytes` were handed out, and how
   * many plaintexts decrypted in place (each a view of the read, each its waiter's to release once written; the
   * buffer they share is pinned until the last is done with).
   */
  async #deliver(
    pack: ID,
    run: Wanted[],
    bytes: Uint8Array,
    start: number,
    own: boolean,
  ): Promise<{ sealed: boolean; views: number }> {
    let sealed = false;
    for (const { loc, waiters } of run) {
      for (const w of waiters) {
        if (!w.sealed) continue;
        sealed = true;
        w.resolve(bytes.subarray(loc.offset - start, loc.offset - start + loc.length));
      }
    }
    const opening = run.filter((w) => w.waiters.some((waiter) => !waiter.sealed));
    if (opening.length === 0) return { sealed, views: 0 };
    const inPlace = own && !sealed && apart(opening);
    let results: (Uint8Array | Error)[];
    try {
      results = await this.#open(
        pack,
        opening.map((w) => w.loc),
        bytes,
        start,
        inPlace,
      );
    } catch (err) {
      results = opening.map(() => err as Error);
    }
    // a second waiter of a blob gets a copy: one view per blob at most. A read opened on another thread came back
    // moved (`bytes` is detached here): its plaintexts decrypted in place are views of the buffer that came back,
    // the only plaintexts shorter than their buffers (the thread gives every other one a buffer of its own)
    const home = (bytes.buffer as ArrayBuffer).detached
      ? results.find((r): r is Uint8Array => r instanceof Uint8Array && r.byteLength < r.buffer.byteLength)?.buffer
      : bytes.buffer;
    const views = results.filter((r): r is Uint8Array => r instanceof Uint8Array && r.buffer === home);
    // pinned before any waiter runs: one whose file failed meanwhile gives its view back at once, and must find it
    if (views.length > 0)
      this.#pinned.set(home!, { views: views.length, plain: views.reduce((n, v) => n + v.byteLength, 0) });
    opening.forEach((w, i) => {
      const r = results[i];
      let handed = false;
      for (const waiter of w.waiters) {
        if (waiter.sealed) continue;
        if (r instanceof Error) {
          // nobody will be done with a blob that never came
          this.done(w.loc);
          waiter.reject(r);
        } else {
          // each waiter owns what it is given, so it may free it once written (see read())
          waiter.resolve(handed ? new Uint8Array(r) : r);
          handed = true;
        }
      }
    });
    return { sealed, views: views.length };
  }

  /**
   * Caches the part of a read past what was asked for (the rest was asked for once, and is delivered), counting what
   * it holds for the blobs to come. When that part is most of the read, as when a read reaches ahead through a pack
   * of small files, the read's own bytes are kept; a smaller part is copied out, so that a little kept does not hold
   * a whole read. Copying every time cost a second buffer of up to a pack for each read. True when a view of the
   * read itself is kept.
   */
  #keep(range: Range, bytes: Uint8Array, from: number): boolean {
    if (range.end - from > this.#cacheCapacity) return false;
    const rest = bytes.subarray(from - range.start);
    const whole = rest.length * 2 >= bytes.length;
    // the end the bytes reach, not the one asked for: a read cut short must not promise what it does not hold; and a
    // copy made as a new array, since a backend may hand over a Buffer, whose slice() is a view of the whole read
    const r: CachedRange = {
      pack: range.pack,
      start: from,
      end: from + rest.length,
      bytes: whole ? rest : new Uint8Array(rest),
    };
    this.#cache.push(r);
    this.#cacheBytes += r.bytes.length;
    while (this.#cacheBytes > this.#cacheCapacity) this.#cacheBytes -= this.#cache.shift()!.bytes.length;
    return whole;
  }
}
