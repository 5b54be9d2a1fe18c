// Retries of transient apiserver failures around any Kube: throttling, restarts, lost connections, and admission
// webhooks that are briefly down (a step's status update waits for the dispatcher to come back instead of
// failing the step). Capped exponential backoff with full jitter. Every write here is safe to repeat: creates use
// deterministic names (AlreadyExists on a repeat), replaces carry a resourceVersion (Conflict on a repeat).
import { isTransient } from './errors.ts';
import type { DeleteOptions, Kube, KubeObject, ListOptions, ObjectKey, PatchOptions } from './kube.ts';
import type { TokenRequestSpec } from './kube.ts';
import type { KindName } from './resources.ts';
import { sleep } from '../../engine/concurrency/sleep.ts';

export interface KubeRetryOptions {
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** no new attempt starts once this much time has passed since the first */
  maxElapsedMs?: number;
  signal?: AbortSignal;
  onRetry?: (info: { operation: string; attempt: number; delayMs: number; error: unknown }) => void;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

const defaults = { initialDelayMs: 250, maxDelayMs: 10_000, maxElapsedMs: 15 * 60_000 };

export { sleep };

export class RetryingKube implements Kube {
  readonly inner: Kube;
  readonly #opts: KubeRetryOptions;

  constructor(inner: Kube, opts: KubeRetryOptions = {}) {
    this.inner = inner;
    this.#opts = opts;
  }

  get<T extends KubeObject>(key: ObjectKey): Promise<T | undefined> {
    return this.#retry(`get ${key.kind}`, () => this.inner.get<T>(key));
  }

  list<T extends KubeObject>(kind: KindName, opts?: ListOptions): Promise<T[]> {
    return this.#retry(`list ${kind}`, () => this.inner.list<T>(kind, opts));
  }

  create<T extends KubeObject>(obj: T): Promise<T> {
    return this.#retry(`create ${obj.kind}`, () => this.inner.create(obj));
  }

  replace<T extends KubeObject>(obj: T): Promise<T> {
    return this.#retry(`replace ${obj.kind}`, () => this.inner.replace(obj));
  }

  replaceStatus<T extends KubeObject>(obj: T): Promise<T> {
    return this.#retry(`update the status of ${obj.kind}`, () => this.inner.replaceStatus(obj));
  }

  patch<T extends KubeObject>(key: ObjectKey, patch: unknown, opts?: PatchOptions): Promise<T> {
    return this.#retry(`patch ${key.kind}`, () => this.inner.patch<T>(key, patch, opts));
  }

  delete(key: ObjectKey, opts?: DeleteOptions): Promise<boolean> {
    return this.#retry(`delete ${key.kind}`, () => this.inner.delete(key, opts));
  }

  createToken(namespace: string, name: string, spec: TokenRequestSpec): Promise<string> {
    return this.#retry(`create a token of ServiceAccount ${name}`, () => this.inner.createToken(namespace, name, spec));
  }

  async #retry<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    const o = { ...defaults, ...this.#opts };
    const wait = o.sleep ?? sleep;
    const random = o.random ?? Math.random;
    const started = Date.now();
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (error) {
        const cap = Math.min(o.maxDelayMs, o.initialDelayMs * 2 ** (attempt - 1));
        const delayMs = Math.round(cap * random());
        if (!isTransient(error) || Date.now() - started + delayMs > o.maxElapsedMs || o.signal?.aborted) throw error;
        o.onRetry?.({ operation, attempt, delayMs, error });
        await wait(delayMs, o.signal);
      }
    }
  }
}
