// Gauges read from the resources' status at scrape time (BackupSchedules, DataCopies): status is the only state, so
// every replica reports the same values (sum() over replicas would double them; use max()). One list call serves
// every scrape within a few seconds, so a scrape storm does not reach the apiserver; a failed list serves the last
// values read and counts the failure.
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import type { KindName } from '../shared/kube/resources.ts';
import { Counter } from './metrics.ts';

export interface ListedMetricsOptions {
  /** how long one list answers scrapes */
  ttlMs?: number;
  now?: () => number;
  log?: Logger;
}

export interface ListedFamilies<T> {
  kind: KindName;
  /** e.g. ferry_schedule_list_errors_total */
  errorsMetric: string;
  /** the gauges for these objects, as text lines */
  lines: (objects: T[]) => string[];
}

/** Lists one kind in every namespace at most once per ttlMs; concurrent scrapes share one list call. */
export class ListedMetrics<T extends KubeObject> {
  readonly #kube: Kube;
  readonly #families: ListedFamilies<T>;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #log: Logger | undefined;
  readonly #errors: Counter;
  #cached: { at: number; lines: string[] } | undefined;
  #pending: Promise<string[]> | undefined;

  constructor(kube: Kube, families: ListedFamilies<T>, opts: ListedMetricsOptions = {}) {
    this.#kube = kube;
    this.#families = families;
    this.#ttlMs = opts.ttlMs ?? 5000;
    this.#now = opts.now ?? Date.now;
    this.#log = opts.log;
    this.#errors = new Counter(
      families.errorsMetric,
      `Scrapes that could not list the ${families.kind}s and served the last values read (or none).`,
    );
    this.#errors.inc({}, 0);
  }

  async lines(): Promise<string[]> {
    const cached = this.#cached;
    if (cached && this.#now() - cached.at < this.#ttlMs) return [...cached.lines, ...this.#errors.render()];
    this.#pending ??= this.#refresh().finally(() => {
      this.#pending = undefined;
    });
    const fresh = await this.#pending;
    return [...fresh, ...this.#errors.render()];
  }

  async #refresh(): Promise<string[]> {
    try {
      const objects = await this.#kube.list<T>(this.#families.kind);
      this.#cached = { at: this.#now(), lines: this.#families.lines(objects) };
      return this.#cached.lines;
    } catch (err) {
      this.#errors.inc({});
      this.#log?.warn(`could not list the ${this.#families.kind}s for /metrics`, {
        error: err instanceof Error ? err.message : String(err),
      });
      return this.#cached?.lines ?? this.#families.lines([]);
    }
  }
}
