// What the two schedule commands share: `ferry-step schedule` (reconcile a BackupSchedule's CronJob) and
// `ferry-step schedule-run` (one run, in the CronJob's pod). They work on a schedule, not on a DataUpload or
// DataDownload, so they take a smaller context than the phase steps, and write the schedule's status and Events.
import type { BackupSchedule } from '../../shared/api/types.ts';
import { emitEvent } from '../../shared/kube/events.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import type { Logger } from '../../shared/kube/logger.ts';
import { updateStatus } from '../../shared/kube/status.ts';
import { parseNamespacedRef } from '../namespaced-ref.ts';

export type Schedule = BackupSchedule & KubeObject;

export interface ScheduleContext {
  command: 'schedule' | 'schedule-run';
  kube: Kube;
  log: Logger;
  /** ferry's namespace: the Job templates */
  ferryNamespace: string;
  podName: string;
  /** the Job running this pod; a CronJob's Job name carries the scheduled minute */
  jobName?: string;
  /** how often a run looks at its DataUploads */
  pollMs: number;
  signal: AbortSignal;
  now(): Date;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface ScheduleRef {
  namespace: string;
  name: string;
}

/** "<namespace>/<name>", optionally after "BackupSchedule/". */
export function parseScheduleRef(text: string): ScheduleRef {
  return parseNamespacedRef('BackupSchedule', text);
}

export function readSchedule(ctx: ScheduleContext, ref: ScheduleRef): Promise<Schedule | undefined> {
  return ctx.kube.get<Schedule>({ kind: 'BackupSchedule', namespace: ref.namespace, name: ref.name });
}

type Status = NonNullable<BackupSchedule['status']>;

/** A status write on the newest schedule; `change` returns false when nothing needs writing. */
export function writeScheduleStatus(
  ctx: ScheduleContext,
  s: Schedule,
  change: (status: Status, fresh: Schedule) => boolean | void,
): Promise<Schedule> {
  return updateStatus(ctx.kube, s, (fresh) => {
    const status: Status = { ...fresh.status };
    const result = change(status, fresh);
    fresh.status = status;
    return result;
  });
}

/** An Event about the schedule; a failure to write it is logged, never fatal. */
export async function scheduleEvent(
  ctx: ScheduleContext,
  s: Schedule,
  ev: { type: 'Normal' | 'Warning'; reason: string; note: string },
): Promise<void> {
  try {
    const action = ctx.command === 'schedule' ? 'Reconcile' : 'Run';
    await emitEvent(
      ctx.kube,
      s,
      { ...ev, action },
      { controller: `ferry.dev/step-${ctx.command}`, instance: ctx.podName },
      ctx.now(),
    );
  } catch (err) {
    ctx.log.warn('could not record an Event', { reason: ev.reason, error: (err as Error).message });
  }
}
