// How a run shows in its BackupSchedule's status and Events, whatever it creates (DataUploads, or one AppBackup):
// status.lastRun while it runs, a skipped run, and its end with the LastRunSucceeded condition.
import type { BackupScheduleStatus, ScheduleRun } from '../../shared/api/types.ts';
import { setCondition } from '../../shared/kube/conditions.ts';
import type { Outcome } from '../context.ts';
import { scheduleEvent, writeScheduleStatus } from './context.ts';
import type { Schedule, ScheduleContext } from './context.ts';

/** The scheduled time a run is for, and its id. */
export interface RunTime {
  run: string;
  scheduledMs: number;
  scheduledTime: string;
}

export async function recordRun(
  ctx: ScheduleContext,
  s: Schedule,
  lastRun: ScheduleRun,
  extra: (status: BackupScheduleStatus) => void = () => undefined,
): Promise<Schedule> {
  return writeScheduleStatus(ctx, s, (status) => {
    // a slow earlier run (concurrencyPolicy Allow) does not hide a later one; run ids sort by time
    if (!status.lastRun || status.lastRun.run <= lastRun.run) status.lastRun = lastRun;
    extra(status);
  });
}

/** concurrencyPolicy refused the run: recorded, with a Warning. */
export async function skipRun(
  ctx: ScheduleContext,
  s: Schedule,
  t: RunTime,
  refused: string,
  timing: (status: BackupScheduleStatus) => void,
): Promise<Outcome> {
  const { run, scheduledTime } = t;
  await recordRun(ctx, s, { run, scheduledTime, outcome: 'Skipped', message: `Skipped: ${refused}.` }, timing);
  await scheduleEvent(ctx, s, { type: 'Warning', reason: 'RunSkipped', note: `Run ${run} skipped: ${refused}.` });
  return { outcome: 'Skipped', reason: refused };
}

/** The run's end: lastRun, lastSuccessfulTime, the LastRunSucceeded condition and an Event. */
export async function finishRun(
  ctx: ScheduleContext,
  s: Schedule,
  t: RunTime,
  end: Omit<ScheduleRun, 'run' | 'scheduledTime'> & { outcome: 'Succeeded' | 'Failed'; message: string },
  /** the start's status change, for a run that ends as it starts */
  timing: (status: BackupScheduleStatus) => void = () => undefined,
): Promise<Outcome> {
  const { run, scheduledMs, scheduledTime } = t;
  const succeeded = end.outcome === 'Succeeded';
  await recordRun(ctx, s, { run, scheduledTime, ...end }, (status) => {
    timing(status);
    if (succeeded && (!status.lastSuccessfulTime || Date.parse(status.lastSuccessfulTime) < scheduledMs))
      status.lastSuccessfulTime = scheduledTime;
    status.conditions = setCondition(
      status.conditions,
      {
        type: 'LastRunSucceeded',
        status: succeeded ? 'True' : 'False',
        reason: succeeded ? 'AllCompleted' : 'BackupsFailed',
        message: end.message,
      },
      ctx.now(),
    );
  });
  await scheduleEvent(ctx, s, {
    type: succeeded ? 'Normal' : 'Warning',
    reason: succeeded ? 'RunSucceeded' : 'RunFailed',
    note: `Run ${run}: ${end.message}`,
  });
  return { outcome: succeeded ? 'Advanced' : 'Failed', reason: end.message };
}
