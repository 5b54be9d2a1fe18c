// Reads data blobs for a restore by pack ranges instead of one request per blob: requests that arrive while reads
// are busy (or in the same turn of the event loop) are grouped by pack, and neighbouring blobs of one pack are
// fetched with a single ranged read. Restoring many small files thus costs a few reads per pack, not one per file.
import type { Backend } from '../backend/backend.ts';
import type { ID } from '../ids/id.ts';
import type { BlobLocation } from '../index/table.ts';
import type { PackedBlob } from '../pack/blob.ts';

/**
 * Opens (decrypts, decompresses, verifies) the blobs of one read: `bytes` holds the pack from `start` on.
 * Each result is the plaintext or the reason that blob could not be opened.
 */
export type OpenBlobs = (pack: ID, blobs: readonly PackedBlob[], bytes: Uint8Array, start: number) => Promise<(Uint8Array | Error)[]>;

export interface PackReaderOptions {
  /** ranged reads in flight */
  reads?: number;
  /** the longest read, in bytes (a single longer blob is still read whole) */
  maxRead?: number;
  /** bytes of unwanted blobs between two wanted ones that are read through rather than starting a new read */
  maxGap?: number;
  signal?: AbortSignal;
}

interface Waiter {
  resolve(data: Uint8Array): void;
  reject(err: Error): void;
}

interface Wanted {
  loc: BlobLocation;
  /** several files may want the same blob */
  waiters: Waiter[];
}

export class PackReader {
  readonly #backend: Backend;
  readonly #open: OpenBlobs;
  readonly #reads: number;
  readonly #maxRead: number;
  readonly #maxGap: number;
  readonly #signal: AbortSignal | undefined;
  /** wanted blobs by pack (then by offset); packs in the order their oldest wanted blob arrived */
  readonly #pending = new Map<ID, Map<number, Wanted>>();
  #active = 0;
  #scheduled = false;
  /** reads issued, for tests and benchmarks */
  readsIssued = 0;

  constructor(backend: Backend, open: OpenBlobs, opts: PackReaderOptions = {}) {
    this.#backend = backend;
    this.#open = open;
    this.#reads = opts.reads ?? 4;
    this.#maxRead = opts.maxRead ?? 8 << 20;
    this.#maxGap = opts.maxGap ?? 256 << 10;
    this.#signal = opts.signal;
    // requests still waiting for a read would otherwise never settle
    this.#signal?.addEventListener('abort', () => this.#failPending(this.#signal!.reason), { once: true });
  }

  /** The plaintext of a blob at `loc`; resolves once the read holding it is done. */
  read(loc: BlobLocation): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      this.#signal?.throwIfAborted();
      let byOffset = this.#pending.get(loc.pack);
      if (!byOffset) {
        byOffset = new Map();
        this.#pending.set(loc.pack, byOffset);
      }
      const wanted = byOffset.get(loc.offset);
      if (wanted) wanted.waiters.push({ resolve, reject });
      else byOffset.set(loc.offset, { loc, waiters: [{ resolve, reject }] });
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
   * Starts reads while slots are free. With a read already in flight, only a run that fills a read is started:
   * smaller ones wait, so the requests arriving meanwhile join them instead of costing a read each.
   */
  #dispatch(): void {
    for (const [pack, byOffset] of this.#pending) {
      if (this.#active >= this.#reads) return;
      while (byOffset.size > 0 && this.#active < this.#reads) {
        const run = this.#takeRun(byOffset, this.#active > 0);
        if (!run) break;
        this.#active++;
        this.readsIssued++;
        void this.#fetch(pack, run).finally(() => {
          this.#active--;
          this.#schedule();
        });
      }
      if (byOffset.size === 0) this.#pending.delete(pack);
    }
  }

  #failPending(reason: unknown): void {
    const err = reason instanceof Error ? reason : new Error('restore canceled');
    for (const byOffset of this.#pending.values()) for (const w of byOffset.values()) for (const waiter of w.waiters) waiter.reject(err);
    this.#pending.clear();
  }

  /**
   * Removes and returns the wanted blobs from the lowest offset on that one read covers; when `onlyFull`, only if
   * they fill half a read or more (or the read ends at a gap too wide to bridge).
   */
  #takeRun(byOffset: Map<number, Wanted>, onlyFull: boolean): Wanted[] | undefined {
    const sorted = [...byOffset.values()].sort((a, b) => a.loc.offset - b.loc.offset);
    const run = [sorted[0]];
    const start = sorted[0].loc.offset;
    let end = start + sorted[0].loc.length;
    let closed = false;
    for (let i = 1; i < sorted.length; i++) {
      const { offset, length } = sorted[i].loc;
      if (offset - end > this.#maxGap || offset + length - start > this.#maxRead) {
        closed = true;
        break;
      }
      run.push(sorted[i]);
      end = Math.max(end, offset + length);
    }
    if (onlyFull && !closed && end - start < this.#maxRead / 2) return undefined;
    for (const w of run) byOffset.delete(w.loc.offset);
    return run;
  }

  async #fetch(pack: ID, run: Wanted[]): Promise<void> {
    const start = run[0].loc.offset;
    const end = run.reduce((e, w) => Math.max(e, w.loc.offset + w.loc.length), start);
    let results: (Uint8Array | Error)[];
    try {
      const bytes = await this.#backend.load({ type: 'pack', name: pack }, start, end - start, this.#signal);
      results = await this.#open(pack, run.map((w) => w.loc), bytes, start);
    } catch (err) {
      for (const w of run) for (const waiter of w.waiters) waiter.reject(err as Error);
      return;
    }
    run.forEach((w, i) => {
      const r = results[i];
      for (const waiter of w.waiters) {
        if (r instanceof Error) waiter.reject(r);
        else waiter.resolve(r);
      }
    });
  }
}
