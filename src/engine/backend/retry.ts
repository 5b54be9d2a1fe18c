// Retries transient failures (network errors, 5xx, throttling) of any backend with capped exponential backoff and
// full jitter, so many workers hitting the same hiccup do not come back in lockstep. Permanent errors, missing files
// and aborts go straight to the caller. Every operation of the contract is idempotent, which makes this safe.

import { isPermanent } from './backend.ts';
import type { Backend, FileInfo, FileType, Handle, Retention } from './backend.ts';
import { isAbort } from './errors.ts';
import { sleep } from '../concurrency/sleep.ts';

export interface RetryInfo {
  operation: string;
  /** the attempt that just failed, from 1 */
  attempt: number;
  delayMs: number;
  error: unknown;
}

export interface RetryOptions {
  /** attempts in total, the first included */
  attempts?: number;
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** no new attempt starts once this much time has passed since the first */
  maxElapsedMs?: number;
  /** told about every retry, e.g. to log it (the error messages carry no secrets) */
  onRetry?: (info: RetryInfo) => void;
  /** [0, 1); replaceable so tests can pin the jitter */
  random?: () => number;
}

const defaults = {
  attempts: 10,
  initialDelayMs: 500,
  maxDelayMs: 30_000,
  // long enough to ride out an S3 endpoint restart or a short network partition
  maxElapsedMs: 5 * 60_000,
};

/** Errors that say the code is wrong, not the network; retrying them only hides the bug. */
function isProgrammingError(err: unknown): boolean {
  return (
    err instanceof TypeError || err instanceof RangeError || err instanceof SyntaxError || err instanceof ReferenceError
  );
}

export class RetryBackend implements Backend {
  readonly location: string;
  readonly inner: Backend;
  readonly retention: Retention | undefined;
  #opts: Required<Omit<RetryOptions, 'onRetry'>> & Pick<RetryOptions, 'onRetry'>;

  constructor(inner: Backend, opts: RetryOptions = {}) {
    this.inner = inner;
    this.location = inner.location;
    this.#opts = { ...defaults, random: Math.random, ...opts };
    const retention = inner.retention;
    this.retention = retention && {
      policy: retention.policy,
      extend: (h) => this.#run(`extend retention of ${h.type} ${h.name}`, () => retention.extend(h)),
    };
  }

  #retryable(err: unknown, signal?: AbortSignal): boolean {
    return !isAbort(err, signal) && !isPermanent(err) && !this.inner.isNotExist(err) && !isProgrammingError(err);
  }

  /** Full jitter: uniform in [0, min(max, initial * 2^(attempt-1))]. */
  #delay(attempt: number): number {
    const ceiling = Math.min(this.#opts.maxDelayMs, this.#opts.initialDelayMs * 2 ** (attempt - 1));
    return Math.round(this.#opts.random() * ceiling);
  }

  /** Waits before the next attempt, or rethrows `err` when the budget is spent or the error is not transient. */
  async #backoff(
    operation: string,
    attempt: number,
    started: number,
    err: unknown,
    signal?: AbortSignal,
  ): Promise<void> {
    if (!this.#retryable(err, signal) || attempt >= this.#opts.attempts) throw err;
    const delayMs = this.#delay(attempt);
    if (performance.now() - started + delayMs > this.#opts.maxElapsedMs) throw err;
    this.#opts.onRetry?.({ operation, attempt, delayMs, error: err });
    await sleep(delayMs, signal);
  }

  async #run<T>(operation: string, fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (err) {
        await this.#backoff(operation, attempt, started, err, signal);
      }
    }
  }

  create(): Promise<void> {
    return this.#run('create', () => this.inner.create());
  }

  save(h: Handle, data: Uint8Array, signal?: AbortSignal, sha256?: string): Promise<void> {
    return this.#run(`save ${h.type} ${h.name}`, () => this.inner.save(h, data, signal, sha256), signal);
  }

  load(h: Handle, offset?: number, length?: number, signal?: AbortSignal): Promise<Uint8Array> {
    return this.#run(`load ${h.type} ${h.name}`, () => this.inner.load(h, offset, length, signal), signal);
  }

  stat(h: Handle): Promise<FileInfo> {
    return this.#run(`stat ${h.type} ${h.name}`, () => this.inner.stat(h));
  }

  remove(h: Handle): Promise<void> {
    return this.#run(`remove ${h.type} ${h.name}`, () => this.inner.remove(h));
  }

  /** A listing that fails part-way starts over, skipping the names already handed out. */
  async *list(type: FileType, signal?: AbortSignal): AsyncIterable<FileInfo> {
    const seen = new Set<string>();
    const started = performance.now();
    for (let attempt = 1; ; attempt++) {
      try {
        for await (const info of this.inner.list(type, signal)) {
          if (seen.has(info.name)) continue;
          seen.add(info.name);
          yield info;
        }
        return;
      } catch (err) {
        await this.#backoff(`list ${type}`, attempt, started, err, signal);
      }
    }
  }

  isNotExist(err: unknown): boolean {
    return this.inner.isNotExist(err);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
