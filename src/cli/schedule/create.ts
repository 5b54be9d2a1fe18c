// `ferry schedule create NAME --schedule CRON (--pvc P,... | --selector k=v,...) --location L`: a BackupSchedule in
// the namespace. Every flag is checked against the API's own field rules first, so a mistake is bad usage naming
// the flag (exit 2), not an apiserver refusal.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import type { BackupSchedule, BackupScheduleSpec, ConcurrencyPolicy, RetentionPolicy } from '../../shared/api/types.ts';
import { apiVersion } from '../../shared/api/types.ts';
import { validateFields } from '../../shared/api/schemas.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { cronProblem } from '../../shared/schedule/cron.ts';
import { timeZoneProblem } from '../../shared/schedule/zone.ts';
import { kubeArgs, withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import { UsageError } from '../run.ts';

const keepFlags = {
  'keep-last': 'keepLast',
  'keep-hourly': 'keepHourly',
  'keep-daily': 'keepDaily',
  'keep-weekly': 'keepWeekly',
  'keep-monthly': 'keepMonthly',
  'keep-yearly': 'keepYearly',
} as const satisfies Record<string, keyof RetentionPolicy>;

/** The flag that sets each spec field, for messages. */
const flagOf: Record<string, string> = {
  schedule: '--schedule',
  timeZone: '--time-zone',
  pvcs: '--pvc',
  selector: '--selector',
  backupStorageLocation: '--location',
  snapshotMoveData: '--no-move-data',
  expire: '--expire',
  retention: '--keep-*',
  suspend: '--suspend',
  concurrencyPolicy: '--concurrency-policy',
  jitter: '--jitter',
  ...Object.fromEntries(Object.entries(keepFlags).map(([flag, field]) => [`retention.${field}`, `--${flag}`])),
};

const policies: readonly ConcurrencyPolicy[] = ['Allow', 'Forbid', 'Replace'];

export type Schedule = BackupSchedule & KubeObject;

function names(value: string | undefined, flag: string): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((n) => objectName(n, flag));
}

function matchLabels(value: string | undefined): Record<string, string> | undefined {
  if (value === undefined || value === '') return undefined;
  const labels: Record<string, string> = {};
  for (const term of value.split(',')) {
    const m = /^\s*([A-Za-z0-9][-A-Za-z0-9_./]*)\s*=\s*([-A-Za-z0-9_.]*)\s*$/.exec(term);
    if (!m) throw new UsageError(`--selector "${term}" is not KEY=VALUE (several comma-separated)`);
    labels[m[1]] = m[2];
  }
  return labels;
}

function count(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} "${value}" is not a whole number`);
  return Number(value);
}

type Flags = Record<string, string | boolean | undefined>;

/** The spec the flags describe, or bad usage naming the flag that is wrong. */
export function specFromFlags(flags: Flags): BackupScheduleSpec {
  const text = (k: string) => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined);
  const schedule = text('schedule');
  if (!schedule) throw new UsageError('--schedule is required (five-field cron such as "0 2 * * *", or @daily)');
  const cron = cronProblem(schedule);
  if (cron) throw new UsageError(`--schedule "${schedule}": ${cron}`);
  const zone = text('time-zone');
  const zoneIssue = zone ? timeZoneProblem(zone) : undefined;
  if (zoneIssue) throw new UsageError(`--time-zone "${zone}": ${zoneIssue}`);
  const location = text('location');
  if (!location) throw new UsageError('--location is required (a BackupStorageLocation, see ferry location get)');
  const pvcs = names(text('pvc'), '--pvc');
  const labels = matchLabels(text('selector'));
  if (pvcs.length === 0 && !labels) throw new UsageError('--pvc or --selector is required: which PVCs to back up');
  const policy = text('concurrency-policy');
  if (policy !== undefined && !policies.includes(policy as ConcurrencyPolicy))
    throw new UsageError(`--concurrency-policy "${policy}" must be one of ${policies.join(', ')}`);
  const retention: RetentionPolicy = {};
  for (const [flag, field] of Object.entries(keepFlags)) {
    const n = count(text(flag), `--${flag}`);
    if (n !== undefined) retention[field] = n;
  }
  const spec: BackupScheduleSpec = { schedule, backupStorageLocation: objectName(location, '--location') };
  if (zone) spec.timeZone = zone;
  if (pvcs.length > 0) spec.pvcs = pvcs;
  if (labels) spec.selector = { matchLabels: labels };
  if (flags['move-data'] === false) spec.snapshotMoveData = false;
  if (text('expire')) spec.expire = text('expire');
  if (Object.keys(retention).length > 0) spec.retention = retention;
  if (flags.suspend === true) spec.suspend = true;
  if (policy) spec.concurrencyPolicy = policy as ConcurrencyPolicy;
  if (text('jitter')) spec.jitter = text('jitter');
  const issue = validateFields('BackupSchedule', 'spec', spec)[0];
  if (issue) {
    const field = issue.path.replace(/^spec\./, '');
    const flag = flagOf[field] ?? flagOf[field.split(/[.[]/)[0]] ?? field;
    throw new UsageError(`${flag}: ${issue.message}`);
  }
  return spec;
}

export default defineCommand({
  meta: { name: 'create', description: 'Create a backup schedule for PVCs of the namespace' },
  args: {
    name: { type: 'positional', required: true, description: 'the schedule', valueHint: 'NAME' },
    schedule: {
      type: 'string',
      description: 'five-field cron ("0 2 * * *") or @hourly, @daily, @weekly, @monthly',
      valueHint: 'CRON',
    },
    'time-zone': {
      type: 'string',
      description: 'IANA time zone of the schedule and of retention (default UTC)',
      valueHint: 'ZONE',
    },
    pvc: { type: 'string', description: 'PVCs to back up, comma-separated', valueHint: 'PVC,...' },
    selector: {
      type: 'string',
      description: 'back up the PVCs with these labels, KEY=VALUE comma-separated',
      valueHint: 'K=V,...',
    },
    location: { type: 'string', description: 'BackupStorageLocation to back up into', valueHint: 'LOCATION' },
    'move-data': {
      type: 'boolean',
      description: 'move the data into the repository (--no-move-data keeps CSI snapshots only)',
      default: true,
    },
    expire: {
      type: 'string',
      description: 'delete each backup this long after it was made, e.g. 720h',
      valueHint: 'DURATION',
    },
    'keep-last': { type: 'string', description: 'retention: keep the last N backups of each PVC', valueHint: 'N' },
    'keep-hourly': {
      type: 'string',
      description: 'retention: keep one backup for each of the last N hours',
      valueHint: 'N',
    },
    'keep-daily': { type: 'string', description: 'retention: ... days', valueHint: 'N' },
    'keep-weekly': { type: 'string', description: 'retention: ... weeks', valueHint: 'N' },
    'keep-monthly': { type: 'string', description: 'retention: ... months', valueHint: 'N' },
    'keep-yearly': { type: 'string', description: 'retention: ... years', valueHint: 'N' },
    suspend: { type: 'boolean', description: 'create it suspended (ferry schedule resume starts it)', default: false },
    'concurrency-policy': {
      type: 'string',
      description: 'when the previous run is unfinished: Allow, Forbid (skip) or Replace (cancel it)',
      valueHint: 'POLICY',
    },
    jitter: { type: 'string', description: 'spread runs by a stable delay below this, e.g. 5m', valueHint: 'DURATION' },
    ...kubeArgs,
    ...outputArgs,
  },
  async run({ args }) {
    const format = outputFormat(args);
    const name = objectName(args.name, 'NAME');
    const spec = specFromFlags(args as Flags);
    await withKube(args, async ({ kube, namespace }) => {
      const created = await kube.create<Schedule>({
        apiVersion,
        kind: 'BackupSchedule',
        metadata: { name, namespace },
        spec,
      });
      if (isDocument(format)) printDocument(created, format);
      else
        consola.success(
          `BackupSchedule ${namespace}/${name} created: "${spec.schedule}"${spec.timeZone ? ` (${spec.timeZone})` : ''}${spec.suspend ? ', suspended' : ''}`,
        );
    });
  },
});
