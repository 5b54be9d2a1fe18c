// The run of a BackupSchedule with spec.appBackup: ONE AppBackup of all the schedule's PVCs (named after schedule
// and scheduled minute, so a retried pod creates nothing twice; the AppBackup's step resolves the PVCs, runs the
// hooks and takes the snapshots). concurrencyPolicy judges earlier runs' AppBackups, of which only those still
// taking snapshots (New, InProgress) hold the next one back: one that is Uploading already has its instant. The
// run waits for its AppBackup to end, then applies retention counting AppBackups, one per run.
import { appBackupTerminalPhases } from '../../shared/api/app.ts';
import type { AppBackup, AppBackupPhase, AppRestore } from '../../shared/api/app.ts';
import { apiVersion } from '../../shared/api/types.ts';
import type { BackupScheduleStatus, DataDownload, ScheduleRun } from '../../shared/api/types.ts';
import { isAlreadyExists, KubeError } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { planAppRetention } from '../../shared/retention/app-plan.ts';
import { isEmptyPolicy } from '../../shared/retention/retention.ts';
import {
  jitterDelay,
  runUploadName,
  scheduleAnnotations,
  scheduleLabel,
  scheduleLabels,
  scheduleSelector,
} from '../../shared/schedule/names.ts';
import { parseDuration } from '../../shared/api/duration.ts';
import type { Outcome } from '../context.ts';
import { scheduleEvent } from './context.ts';
import type { Schedule, ScheduleContext } from './context.ts';
import { deletePlanned, nothingDeleted, type RetentionDone } from './retention-delete.ts';
import { finishRun, recordRun, skipRun, type RunTime } from './run-record.ts';

type Backup = AppBackup & KubeObject;
type RunPVC = NonNullable<ScheduleRun['pvcs']>[number];

/** Phases in which an AppBackup has not yet cut its snapshots: only these hold back the next run. */
const beforeSnapshots: readonly AppBackupPhase[] = ['New', 'InProgress'];

export function runAppBackupName(s: Schedule, run: string): string {
  return runUploadName(s.metadata.name, 'app', run);
}

export function appBackupFor(s: Schedule, t: RunTime): Backup {
  const app = s.spec.appBackup ?? {};
  return {
    apiVersion,
    kind: 'AppBackup',
    metadata: {
      name: runAppBackupName(s, t.run),
      namespace: s.metadata.namespace,
      labels: { [scheduleLabels.schedule]: scheduleLabel(s.metadata.name), [scheduleLabels.run]: t.run },
      annotations: { [scheduleAnnotations.scheduledTime]: t.scheduledTime },
    },
    spec: {
      ...(s.spec.pvcs?.length ? { pvcs: s.spec.pvcs } : {}),
      ...(s.spec.selector ? { selector: s.spec.selector } : {}),
      backupStorageLocation: s.spec.backupStorageLocation,
      ...(app.hooks ? { hooks: app.hooks } : {}),
      ...(app.freeze ? { freeze: true } : {}),
      ...(app.volumeGroupSnapshotClassName ? { volumeGroupSnapshotClassName: app.volumeGroupSnapshotClassName } : {}),
      ...(app.volumeSnapshotClassName ? { volumeSnapshotClassName: app.volumeSnapshotClassName } : {}),
      ...(s.spec.expire ? { expire: s.spec.expire } : {}),
      tags: { schedule: s.metadata.name, run: t.run },
    },
  };
}

function backupsOf(ctx: ScheduleContext, s: Schedule): Promise<Backup[]> {
  return ctx.kube.list<Backup>('AppBackup', {
    namespace: s.metadata.namespace,
    labelSelector: scheduleSelector(s.metadata.name),
  });
}

/** Earlier runs' AppBackups still before their snapshots: what concurrencyPolicy decides about. */
async function applyConcurrency(ctx: ScheduleContext, s: Schedule, run: string): Promise<string | undefined> {
  const blocking = (await backupsOf(ctx, s)).filter(
    (ab) =>
      ab.metadata.labels?.[scheduleLabels.run] !== run &&
      !ab.metadata.deletionTimestamp &&
      beforeSnapshots.includes(ab.status?.phase ?? 'New'),
  );
  if (blocking.length === 0) return undefined;
  const names = blocking.map((ab) => ab.metadata.name).join(', ');
  const policy = s.spec.concurrencyPolicy ?? 'Forbid';
  if (policy === 'Forbid')
    return `AppBackups of an earlier run are still taking their snapshots (${names}) and concurrencyPolicy is Forbid`;
  if (policy === 'Replace') {
    for (const ab of blocking)
      await ctx.kube.patch(
        { kind: 'AppBackup', namespace: ab.metadata.namespace, name: ab.metadata.name },
        { spec: { cancel: true } },
      );
    ctx.log.info('canceled the AppBackups of an earlier run still taking snapshots (concurrencyPolicy Replace)', {
      appBackups: names,
    });
  }
  return undefined;
}

/** The run's AppBackup, created; a refusal (admission) is the run's failure. */
async function createBackup(ctx: ScheduleContext, s: Schedule, t: RunTime): Promise<string | undefined> {
  try {
    await ctx.kube.create(appBackupFor(s, t));
    return undefined;
  } catch (err) {
    if (isAlreadyExists(err)) return undefined;
    if (err instanceof KubeError && [400, 403, 422].includes(err.status))
      return `AppBackup ${runAppBackupName(s, t.run)} was refused: ${err.message}`.slice(0, 4000);
    throw err;
  }
}

function volumesOf(ab: Backup): RunPVC[] {
  return (ab.status?.volumes ?? []).map((v) => ({
    pvc: v.pvc,
    ...(v.dataUpload ? { dataUpload: v.dataUpload } : {}),
    ...(v.phase ? { phase: v.phase } : {}),
    ...(v.message && v.phase !== 'Completed' ? { message: v.message.slice(0, 4000) } : {}),
  }));
}

/** Deletes the AppBackups the keep-policy lets go (with them their DataUploads and data), one per run. */
async function applyRetention(ctx: ScheduleContext, s: Schedule): Promise<RetentionDone> {
  const rules = s.spec.retention ?? {};
  if (isEmptyPolicy(rules)) return nothingDeleted;
  const namespace = s.metadata.namespace;
  const restores = await ctx.kube.list<AppRestore & KubeObject>('AppRestore', { namespace });
  const downloads = await ctx.kube.list<DataDownload & KubeObject>('DataDownload', { namespace });
  const plan = planAppRetention(await backupsOf(ctx, s), restores, downloads, rules, s.spec.timeZone ?? 'UTC');
  return deletePlanned(ctx, 'AppBackup', plan);
}

export async function runAppBackup(
  ctx: ScheduleContext,
  s: Schedule,
  t: RunTime,
  timing: (status: BackupScheduleStatus) => void,
): Promise<Outcome> {
  const { run, scheduledTime } = t;
  const name = runAppBackupName(s, run);
  const key = { kind: 'AppBackup' as const, namespace: s.metadata.namespace, name };
  if (!(await ctx.kube.get<Backup>(key))) {
    const refused = await applyConcurrency(ctx, s, run);
    if (refused) return skipRun(ctx, s, t, refused, timing);
    const delay = jitterDelay(s.metadata.uid ?? '', run, parseDuration(s.spec.jitter) ?? 0);
    if (delay > 0) await ctx.sleep(delay, ctx.signal);
    const failure = await createBackup(ctx, s, t);
    if (failure) return finishRun(ctx, s, t, { outcome: 'Failed', message: failure }, timing);
  }
  s = await recordRun(ctx, s, { run, scheduledTime, outcome: 'Running', message: `AppBackup ${name}.` }, timing);
  await scheduleEvent(ctx, s, { type: 'Normal', reason: 'RunStarted', note: `Run ${run}: AppBackup ${name}.` });

  let last = '';
  let ab: Backup | undefined;
  for (;;) {
    ab = await ctx.kube.get<Backup>(key);
    if (!ab || appBackupTerminalPhases.includes(ab.status?.phase ?? 'New')) break;
    const running: ScheduleRun = {
      run,
      scheduledTime,
      outcome: 'Running',
      message: `AppBackup ${name} is ${ab.status?.phase ?? 'New'}.`,
      pvcs: volumesOf(ab),
    };
    if (JSON.stringify(running) !== last) s = await recordRun(ctx, s, running);
    last = JSON.stringify(running);
    await ctx.sleep(ctx.pollMs, ctx.signal);
  }
  const phase = ab?.status?.phase;
  const pvcs = ab ? volumesOf(ab) : [];
  if (phase !== 'Completed') {
    const why = ab ? `${phase}${ab.status?.message ? `: ${ab.status.message}` : ''}` : 'deleted before it ended';
    return finishRun(ctx, s, t, {
      outcome: 'Failed',
      message: `AppBackup ${name} ${ab ? `ended ${why}` : why}`.slice(0, 4000),
      pvcs,
    });
  }
  const retention = await applyRetention(ctx, s);
  return finishRun(ctx, s, t, {
    outcome: 'Succeeded',
    message: `AppBackup ${name} Completed (${pvcs.length} volume(s)). ${retention.note}`.trim(),
    pvcs,
    ...(retention.deleted.length ? { deleted: retention.deleted } : {}),
  });
}
