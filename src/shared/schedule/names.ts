// Names and labels of what a BackupSchedule makes, deterministic so every step (and a re-run) finds the same
// objects: the reconcile Job per generation, the CronJob, its ServiceAccount and RoleBinding, and each run's
// DataUploads, named after the schedule, the PVC and the run's scheduled minute.
import { createHash } from 'node:crypto';

export const scheduleLabels = {
  /** on DataUploads, the CronJob and its Jobs: the schedule's name */
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

/** `prefix + name` within `max` characters: a long name is cut and made unique again by a hash of it. */
function fitted(prefix: string, name: string, max: number): string {
  const full = `${prefix}${name}`;
  if (full.length <= max) return full;
  return `${full.slice(0, max - 9).replace(/[-.]+$/, '')}-${hash(name, 8)}`;
}

/** CronJob, ServiceAccount and RoleBinding of a schedule (a CronJob name may have 52 characters). */
export function cronJobName(schedule: string): string {
  return fitted('ferry-schedule-', schedule, 52);
}

export function reconcileJobName(uid: string, generation: number): string {
  return `ferry-sched-${uid.replaceAll('-', '').slice(0, 16)}-g${generation}`;
}

/** yyyymmddhhmm of the scheduled minute, in UTC. */
export function runID(scheduledMs: number): string {
  return new Date(scheduledMs).toISOString().replace(/[-T:]/g, '').slice(0, 12);
}

/** A DataUpload of a run: `<schedule>-<pvc>-<run>`, at most 63 characters (ferry's label limit on names). */
export function runUploadName(schedule: string, pvc: string, run: string): string {
  const base = `${schedule}-${pvc}`;
  const room = 63 - run.length - 1;
  const head = base.length <= room ? base : `${base.slice(0, room - 9).replace(/[-.]+$/, '')}-${hash(base, 8)}`;
  return `${head}-${run}`;
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
