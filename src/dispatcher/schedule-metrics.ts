// BackupSchedule health as Prometheus gauges, read from the schedules' status at scrape time: missed runs, the last
// success, suspension and the last run's outcome, per schedule (listed as ./listed-metrics.ts says).
import type { BackupSchedule, RunOutcome } from '../shared/api/types.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import { Gauge } from './metrics.ts';
import { ListedMetrics, type ListedMetricsOptions } from './listed-metrics.ts';

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

/** The schedule gauges, listed at most once per ttlMs. */
export class ScheduleMetrics extends ListedMetrics<BackupSchedule & KubeObject> {
  constructor(kube: Kube, opts: ListedMetricsOptions = {}) {
    super(
      kube,
      { kind: 'BackupSchedule', errorsMetric: 'ferry_schedule_list_errors_total', lines: scheduleMetricLines },
      opts,
    );
  }
}
