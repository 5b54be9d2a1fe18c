// BackupSchedule health as Prometheus gauges, read from the schedules' status at scrape time: missed runs, the last
// success, suspension and the last run's outcome, per schedule. Status is the only state, so every replica reports
// the same values (sum() over replicas would double them; use max()). One list call serves every scrape within a
// few seconds, so a scrape storm does not reach the apiserver.
import type { BackupSchedule, RunOutcome } from '../shared/api/types.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import { Counter, Gauge } from './metrics.ts';

const outcomes: readonly RunOutcome[] = ['Running', 'Succeeded', 'Failed', 'Skipped'];

function seconds(time: string | undefined): number | undefined {
  const ms = Date.parse(time ?? '');
  return Number.isNaN(ms) ? undefined : ms / 1000;
}

/** The gauges for these schedules, as text lines; a time status does not hold yet has no sample. */
export function scheduleMetricLines(schedules: readonly BackupSchedule[]): string[] {
  const missed = new Gauge(
    'ferry_schedule_missed_runs',
    'Scheduled runs of a BackupSchedule that passed without starting, counted since its creation (status.missedRuns).',
  );
  const success = new Gauge(
    'ferry_schedule_last_success_timestamp_seconds',
    'When the last run of a BackupSchedule that backed up every PVC finished (status.lastSuccessfulTime), seconds since the epoch.',
  );
  const suspended = new Gauge(
    'ferry_schedule_suspended',
    '1 when a BackupSchedule is suspended (spec.suspend), else 0.',
  );
  const lastRun = new Gauge(
    'ferry_schedule_last_run_outcome',
    'The outcome of the last run of a BackupSchedule: 1 for its outcome, 0 for the others (all 0 before a first run).',
  );
  const lastRunTime = new Gauge(
    'ferry_schedule_last_run_timestamp_seconds',
    'When the last run of a BackupSchedule was due (status.lastRun.scheduledTime), seconds since the epoch.',
  );
  for (const s of schedules) {
    const labels = { namespace: s.metadata.namespace ?? '', schedule: s.metadata.name };
    missed.set(labels, s.status?.missedRuns ?? 0);
    suspended.set(labels, s.spec.suspend === true ? 1 : 0);
    const succeeded = seconds(s.status?.lastSuccessfulTime);
    if (succeeded !== undefined) success.set(labels, succeeded);
    for (const outcome of outcomes) lastRun.set({ ...labels, outcome }, s.status?.lastRun?.outcome === outcome ? 1 : 0);
    const due = seconds(s.status?.lastRun?.scheduledTime);
    if (due !== undefined) lastRunTime.set(labels, due);
  }
  return [missed, success, suspended, lastRun, lastRunTime].flatMap((g) => g.render());
}

export interface ScheduleMetricsOptions {
  /** how long one list of the schedules answers scrapes */
  ttlMs?: number;
  now?: () => number;
  log?: Logger;
}

/** Lists BackupSchedules in every namespace at most once per ttlMs; concurrent scrapes share one list call. */
export class ScheduleMetrics {
  readonly #kube: Kube;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #log: Logger | undefined;
  readonly #errors = new Counter(
    'ferry_schedule_list_errors_total',
    'Scrapes that could not list the BackupSchedules and served the last values read (or none).',
  );
  #cached: { at: number; lines: string[] } | undefined;
  #pending: Promise<string[]> | undefined;

  constructor(kube: Kube, opts: ScheduleMetricsOptions = {}) {
    this.#kube = kube;
    this.#ttlMs = opts.ttlMs ?? 5000;
    this.#now = opts.now ?? Date.now;
    this.#log = opts.log;
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
      const schedules = await this.#kube.list<BackupSchedule & KubeObject>('BackupSchedule');
      this.#cached = { at: this.#now(), lines: scheduleMetricLines(schedules) };
      return this.#cached.lines;
    } catch (err) {
      this.#errors.inc({});
      this.#log?.warn('could not list the BackupSchedules for /metrics', {
        error: err instanceof Error ? err.message : String(err),
      });
      return this.#cached?.lines ?? scheduleMetricLines([]);
    }
  }
}
