// When a run is for and what it writes about time: the scheduled minute (from the CronJob's Job name), the runs
// missed since the last one (not counting those due while the schedule was suspended), the next run, and the
// MissedRun condition and Event.
import type { BackupScheduleStatus } from '../../shared/api/types.ts';
import { findCondition, rfc3339, setCondition } from '../../shared/kube/conditions.ts';
import { nextRun, parseCron } from '../../shared/schedule/cron.ts';
import type { CronSchedule } from '../../shared/schedule/cron.ts';
import { runID, scheduledTimeOfJob } from '../../shared/schedule/names.ts';
import { scheduleEvent } from './context.ts';
import type { Schedule, ScheduleContext } from './context.ts';
import type { RunTime } from './run-record.ts';

/** Missed runs counted at most this far: a schedule down for a year need not walk every minute of it. */
const maxMissedCount = 1000;

/** Scheduled times strictly between the last run and this one: runs that never started. */
export function missedBetween(cron: CronSchedule, lastMs: number | undefined, thisMs: number, zone: string): number {
  if (lastMs === undefined || lastMs >= thisMs) return 0;
  let n = 0;
  for (
    let t = nextRun(cron, lastMs, zone);
    t !== undefined && t < thisMs && n < maxMissedCount;
    t = nextRun(cron, t, zone)
  )
    n++;
  return n;
}

export function runTimeOf(ctx: ScheduleContext): RunTime {
  const scheduledMs = scheduledTimeOfJob(ctx.jobName) ?? Math.floor(ctx.now().getTime() / 60_000) * 60_000;
  return { run: runID(scheduledMs), scheduledMs, scheduledTime: rfc3339(new Date(scheduledMs)) };
}

/**
 * The status change every record of this run's start carries (lastScheduleTime, nextScheduleTime, missedRuns,
 * MissedRun), after a Warning Event when runs were missed.
 */
export async function runTiming(
  ctx: ScheduleContext,
  s: Schedule,
  t: RunTime,
): Promise<(status: BackupScheduleStatus) => void> {
  const { scheduledMs, scheduledTime } = t;
  const now = ctx.now().getTime();
  const zone = s.spec.timeZone ?? 'UTC';
  const cron = parseCron(s.spec.schedule);
  const lastMs = s.status?.lastScheduleTime ? Date.parse(s.status.lastScheduleTime) : undefined;
  // runs due while the schedule was suspended were not missed: count from its resumption (Ready turned True)
  const ready = findCondition(s.status?.conditions, 'Ready');
  const resumedMs = ready?.status === 'True' ? Date.parse(ready.lastTransitionTime) : undefined;
  const missed = missedBetween(
    cron,
    lastMs === undefined ? undefined : Math.max(lastMs, resumedMs ?? lastMs),
    scheduledMs,
    zone,
  );
  const next = nextRun(cron, Math.max(now, scheduledMs), zone);
  const timing = (status: BackupScheduleStatus): void => {
    if (status.lastScheduleTime && Date.parse(status.lastScheduleTime) >= scheduledMs) return;
    status.lastScheduleTime = scheduledTime;
    if (next !== undefined) status.nextScheduleTime = rfc3339(new Date(next));
    if (missed > 0) status.missedRuns = (status.missedRuns ?? 0) + missed;
    const message =
      missed > 0
        ? `${missed} run(s) due between ${s.status?.lastScheduleTime} and ${scheduledTime} did not start.`
        : `The run due at ${scheduledTime} started.`;
    status.conditions = setCondition(
      status.conditions,
      {
        type: 'MissedRun',
        status: missed > 0 ? 'True' : 'False',
        reason: missed > 0 ? 'RunsMissed' : 'OnTime',
        message,
      },
      ctx.now(),
    );
  };
  if (missed > 0)
    await scheduleEvent(ctx, s, {
      type: 'Warning',
      reason: 'MissedRun',
      note: `${missed} run(s) due between ${s.status?.lastScheduleTime} and ${scheduledTime} did not start (cluster down, or the CronJob missed its starting deadline).`,
    });

  return timing;
}
