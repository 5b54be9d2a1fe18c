// Groups small files into batches for the workers, so reading, hashing, compressing and sealing them leaves the
// main thread, and one message round trip serves dozens of files. The walk adds files in its own order; a batch
// leaves when it is full, or when the walk flushes before it waits for what it scheduled (a partial batch would
// otherwise never leave). A bounded number of batches in flight keeps memory flat and throttles the walk.
import { Semaphore } from '../concurrency/semaphore.ts';
import type { SmallBatchResult } from './pool.ts';
import type { SmallFileRead } from './worker-protocol.ts';

export interface SmallBatchLimits {
  files: number;
  bytes: number;
  inFlight: number;
}

export type RunBatch = (paths: Uint8Array[]) => Promise<SmallBatchResult>;

interface Waiter {
  resolve(f: SmallFileRead): void;
  reject(err: unknown): void;
}

export class SmallBatches {
  readonly #run: RunBatch;
  readonly #limits: SmallBatchLimits;
  readonly #slots: Semaphore;
  readonly #onAdded: (bytes: number) => void;
  #paths: Uint8Array[] = [];
  #waiters: Waiter[] = [];
  #bytes = 0;

  /** `onAdded` learns the plaintext bytes each batch had to store */
  constructor(run: RunBatch, limits: SmallBatchLimits, onAdded: (bytes: number) => void) {
    this.#run = run;
    this.#limits = limits;
    this.#slots = new Semaphore(limits.inFlight);
    this.#onAdded = onAdded;
  }

  /**
   * Queues one file of about `size` bytes. Settles once it is admitted (its batch may have to wait for a slot);
   * `done` settles when the file is stored.
   */
  async add(path: Uint8Array, size: number): Promise<{ done: Promise<SmallFileRead> }> {
    const done = new Promise<SmallFileRead>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    // failures surface where `done` is awaited; this keeps Node from calling them unhandled in the meantime
    done.catch(() => undefined);
    this.#paths.push(path);
    this.#bytes += size;
    if (this.#paths.length >= this.#limits.files || this.#bytes >= this.#limits.bytes) await this.flush();
    return { done };
  }

  /** Sends the partial batch, if any; settles once it has a slot. */
  async flush(): Promise<void> {
    if (this.#paths.length === 0) return;
    const paths = this.#paths;
    const waiters = this.#waiters;
    this.#paths = [];
    this.#waiters = [];
    this.#bytes = 0;
    await this.#slots.acquire();
    this.#run(paths)
      .then(
        (r) => {
          this.#onAdded(r.added);
          r.files.forEach((f, i) => waiters[i].resolve(f));
        },
        (err: unknown) => {
          for (const w of waiters) w.reject(err);
        },
      )
      .finally(() => this.#slots.release());
  }
}
