// Names and labels of what a BackupSchedule makes, deterministic so every step (and a re-run) finds the same
// objects: the reconcile Job per generation, the CronJob, its ServiceAccount and RoleBinding, and each run's
// DataUploads, named after the schedule, the PVC and the run's scheduled minute.
import { createHash } from 'node:crypto';
import { fitted, labelValue, maxObjectName } from '../kube/names.ts';

export const scheduleLabels = {
  /** on DataUploads, the CronJob and its Jobs: the schedule's name (`scheduleLabel`) */
  schedule: 'ferry.dev/schedule',
  /** on DataUploads: the run (its scheduled minute, UTC, yyyymmddhhmm) */
  run: 'ferry.dev/run',
} as const;

export const scheduleAnnotations = {
  /** RFC 3339 time the run was due: the time retention puts a backup in its hour/day/week/... */
  scheduledTime: 'ferry.dev/scheduled-time',
  /** on a BackupSchedule: "true" deletes its DataUploads (and their repository data) with it */
  deleteBackups: 'ferry.dev/delete-backups',
  /** on a DataUpload: "true" keeps it past spec.expire */
  retainIfExpired: 'ferry.dev/retain-if-expired',
} as const;

/** The ClusterRole each schedule's run ServiceAccount is bound to in its namespace (policies/step-schedule.yaml). */
export const runClusterRole = 'ferry-schedule-run';
/** Job templates in ferry's namespace: the reconcile step's, and the run pod's that the reconciler copies. */
export const reconcileTemplate = 'ferry-step-schedule';
export const runTemplate = 'ferry-schedule-run';

function hash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** The value of ferry.dev/schedule for a schedule's name: the name itself up to 63 characters. */
export function scheduleLabel(schedule: string): string {
  return labelValue(schedule);
}

/** The schedule's DataUploads (of one run, when given). */
export function scheduleSelector(schedule: string, run?: string): string {
  return `${scheduleLabels.schedule}=${scheduleLabel(schedule)}${run ? `,${scheduleLabels.run}=${run}` : ''}`;
}

/** CronJob, ServiceAccount and RoleBinding of a schedule (a CronJob name may have 52 characters). */
export function cronJobName(schedule: string): string {
  return fitted(`ferry-schedule-${schedule}`, 52);
}

export function reconcileJobName(uid: string, generation: number): string {
  return `ferry-sched-${uid.replaceAll('-', '').slice(0, 16)}-g${generation}`;
}

/** yyyymmddhhmm of the scheduled minute, in UTC. */
export function runID(scheduledMs: number): string {
  return new Date(scheduledMs).toISOString().replace(/[-T:]/g, '').slice(0, 12);
}

/** A DataUpload of a run: `<schedule>-<pvc>-<run>`, shortened to an object name's 253 characters if need be. */
export function runUploadName(schedule: string, pvc: string, run: string): string {
  return `${fitted(`${schedule}-${pvc}`, maxObjectName - run.length - 1)}-${run}`;
}

/** The scheduled time the CronJob controller encodes in its Job names (`<cronjob>-<minutes since the epoch>`). */
export function scheduledTimeOfJob(jobName: string | undefined): number | undefined {
  const m = /-(\d{8,10})$/.exec(jobName ?? '');
  return m ? Number(m[1]) * 60_000 : undefined;
}

/** A stable delay in [0, jitterMs) for one run of one schedule, so reruns of a run wait the same. */
export function jitterDelay(uid: string, run: string, jitterMs: number): number {
  if (jitterMs <= 0) return 0;
  return parseInt(hash(`${uid}/${run}`, 8), 16) % jitterMs;
}
