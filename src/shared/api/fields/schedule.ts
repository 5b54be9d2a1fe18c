// BackupSchedule: which PVCs to back up when, and how many backups to keep.
import { arr, bool, int, obj, str } from '../field.ts';
import { scheduledAppBackup } from './app.ts';
import { labelSelector } from './selector.ts';
import { goDuration, objectName, timestamp, conditions, phases, cronSchedule } from './common.ts';

const pvcSelector = labelSelector(
  "PVCs of this namespace with these labels, including PVCs created after the schedule (Kubernetes' label selector).",
  'PVC',
);

const keep = (what: string): ReturnType<typeof int> =>
  int(
    `Keep the newest backup of each of the last this many ${what} that have backups (restic forget --keep-${what === 'backups' ? 'last' : what}).`,
    { minimum: 0, maximum: 100_000 },
  );

const retention = obj(
  "Which Completed backups of each PVC to keep after every successful run, with restic forget's rules: each rule keeps the newest backup of each of its periods (in spec.timeZone), and a backup any rule keeps is kept; the rest are deleted. The only Completed backup of a PVC and backups a restore in this namespace is reading are never deleted. Empty: keep all.",
  {
    keepLast: keep('backups'),
    keepHourly: keep('hourly'),
    keepDaily: keep('daily'),
    keepWeekly: keep('weekly'),
    keepMonthly: keep('monthly'),
    keepYearly: keep('yearly'),
  },
);

export const backupScheduleSpec = obj(
  'Back up PVCs of this namespace on a cron schedule (a CronJob owned by this object creates one DataUpload per PVC and run), then expire and thin out old backups.',
  {
    schedule: cronSchedule(
      'When to back up: five cron fields (minute hour day-of-month month day-of-week) or @hourly, @daily, @weekly, @monthly, @yearly; in spec.timeZone.',
    ),
    timeZone: str('IANA time zone of the schedule and of the retention periods, e.g. Europe/Berlin.', {
      pattern: {
        regex: '^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$',
        allowed: 'an IANA time zone name such as UTC or Europe/Berlin',
      },
      maxLength: 64,
      default: 'UTC',
    }),
    pvcs: arr(
      'Names of PVCs of this namespace to back up; with selector, both sets are backed up.',
      objectName('A PVC name.'),
      { listType: 'set', maxItems: 256 },
    ),
    selector: pvcSelector,
    backupStorageLocation: objectName(
      "BackupStorageLocation (in ferry's namespace) to store the data in; it must allow this namespace.",
    ),
    snapshotMoveData: bool('Move the data into the repository (true) or keep only the CSI snapshots (false).', {
      default: true,
    }),
    expire: str(
      "Each backup is deleted this long after it was made, e.g. 720h (set as the DataUploads' spec.expire). Default: never.",
      { pattern: goDuration },
    ),
    retention,
    suspend: bool('Stop starting runs (the CronJob is suspended); a run already started finishes.', { default: false }),
    concurrencyPolicy: str(
      'What a run does when DataUploads of an earlier run are not finished: Allow starts its own too, Forbid skips this run, Replace cancels the earlier ones first.',
      {
        enum: ['Allow', 'Forbid', 'Replace'],
        default: 'Forbid',
      },
    ),
    jitter: str(
      'Spread the load: each run waits a stable pseudo-random delay below this before creating its DataUploads, e.g. 5m.',
      { pattern: goDuration },
    ),
    appBackup: scheduledAppBackup,
  },
  { required: ['schedule', 'backupStorageLocation'] },
);

const runPVC = obj(
  'The outcome of one PVC in a run.',
  {
    pvc: objectName('The PVC.'),
    dataUpload: objectName('The DataUpload of this PVC and run.'),
    phase: str('Phase of that DataUpload when last seen.', { enum: phases }),
    message: str('Why it failed, when it did.', { maxLength: 4096 }),
  },
  { required: ['pvc'] },
);

const scheduleRun = obj(
  'The latest run.',
  {
    run: str('Run id: the scheduled time (UTC, yyyymmddhhmm); the ferry.dev/run label of its DataUploads.', {
      pattern: { regex: '^[0-9]{12}$', allowed: 'twelve digits (yyyymmddhhmm)' },
    }),
    scheduledTime: timestamp('When the run was due.'),
    outcome: str(
      'Running until every DataUpload ended; Succeeded when all Completed; Skipped when concurrencyPolicy Forbid found earlier ones unfinished.',
      {
        enum: ['Running', 'Succeeded', 'Failed', 'Skipped'],
      },
    ),
    message: str('What happened, in a sentence.', { maxLength: 4096 }),
    pvcs: arr('Outcome per PVC.', runPVC, { listType: 'map', mapKeys: ['pvc'], maxItems: 512 }),
    deleted: arr('DataUploads retention deleted after this run.', objectName('A DataUpload name.'), { maxItems: 1024 }),
  },
  { required: ['run', 'scheduledTime', 'outcome'] },
);

export const backupScheduleStatus = obj('What the schedule did, written by ferry.', {
  observedGeneration: int('metadata.generation the CronJob was last made from.', { minimum: 0 }),
  cronJob: objectName('The CronJob (in this namespace, owned by this schedule) that starts the runs.'),
  lastScheduleTime: timestamp('When the latest run was due.'),
  lastSuccessfulTime: timestamp('When the latest run whose backups all Completed was due.'),
  nextScheduleTime: timestamp('When the next run is due (none while suspended).'),
  missedRuns: int(
    'Runs that were due but did not start (cluster down, CronJob past its deadline), counted since creation.',
    { minimum: 0 },
  ),
  lastRun: scheduleRun,
  conditions,
});
