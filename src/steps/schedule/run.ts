// schedule-run (`ferry-step schedule-run <namespace>/<name>`, the pod of a schedule's CronJob): one run. A schedule
// with spec.appBackup makes one AppBackup per run instead (./app-run.ts); otherwise the run finds
// the PVCs (named and selected, so PVCs created later are included), applies spec.concurrencyPolicy to DataUploads
// of earlier runs still going, creates one DataUpload per PVC (named after schedule, PVC and scheduled minute, so
// a retried pod creates nothing twice), records the run in status (including runs missed since the last one),
// waits for the DataUploads to end, and after a run whose backups all Completed applies the retention policy.
import { terminalPhases } from '../../shared/api/phases.ts';
import { apiVersion } from '../../shared/api/types.ts';
import type { BackupScheduleStatus, DataDownload, DataUpload, ScheduleRun } from '../../shared/api/types.ts';
import { rfc3339 } from '../../shared/kube/conditions.ts';
import { isAlreadyExists, KubeError } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { planRetention } from '../../shared/retention/plan.ts';
import { isEmptyPolicy } from '../../shared/retention/retention.ts';
import {
  jitterDelay,
  runID,
  runUploadName,
  scheduleAnnotations,
  scheduleLabel,
  scheduleLabels,
  scheduledTimeOfJob,
  scheduleSelector,
} from '../../shared/schedule/names.ts';
import { matchesSelector, selectsSomething } from '../../shared/schedule/selector.ts';
import type { Outcome } from '../context.ts';
import { parseDuration } from '../../shared/api/duration.ts';
import { runAppBackup } from './app-run.ts';
import { readSchedule, scheduleEvent } from './context.ts';
import type { Schedule, ScheduleContext, ScheduleRef } from './context.ts';
import { deletePlanned, nothingDeleted, type RetentionDone } from './retention-delete.ts';
import { finishRun, recordRun, skipRun, type RunTime } from './run-record.ts';
import { runTiming, runTimeOf } from './run-timing.ts';

type Upload = DataUpload & KubeObject;
type RunPVC = NonNullable<ScheduleRun['pvcs']>[number];

/** The PVCs of the run, sorted: the named ones (present or not) and those the selector matches now. */
async function pvcsOf(ctx: ScheduleContext, s: Schedule): Promise<{ present: string[]; missing: string[] }> {
  const claims = await ctx.kube.list<KubeObject>('PersistentVolumeClaim', { namespace: s.metadata.namespace });
  const existing = new Set(claims.filter((c) => !c.metadata.deletionTimestamp).map((c) => c.metadata.name));
  const wanted = new Set(s.spec.pvcs ?? []);
  const selector = s.spec.selector;
  if (selectsSomething(selector))
    for (const c of claims)
      if (!c.metadata.deletionTimestamp && matchesSelector(selector, c.metadata.labels)) wanted.add(c.metadata.name);
  const all = [...wanted].sort();
  return { present: all.filter((n) => existing.has(n)), missing: all.filter((n) => !existing.has(n)) };
}

function uploadFor(s: Schedule, pvc: string, run: string, scheduledMs: number): Upload {
  return {
    apiVersion,
    kind: 'DataUpload',
    metadata: {
      name: runUploadName(s.metadata.name, pvc, run),
      namespace: s.metadata.namespace,
      labels: { [scheduleLabels.schedule]: scheduleLabel(s.metadata.name), [scheduleLabels.run]: run },
      annotations: { [scheduleAnnotations.scheduledTime]: rfc3339(new Date(scheduledMs)) },
    },
    spec: {
      sourcePVC: pvc,
      backupStorageLocation: s.spec.backupStorageLocation,
      ...(s.spec.snapshotMoveData === undefined ? {} : { snapshotMoveData: s.spec.snapshotMoveData }),
      ...(s.spec.expire ? { expire: s.spec.expire } : {}),
      tags: { schedule: s.metadata.name, run },
    },
  };
}

const isDone = (du: DataUpload): boolean => terminalPhases.includes(du.status?.phase ?? 'New');

async function uploadsOf(ctx: ScheduleContext, s: Schedule, run?: string): Promise<Upload[]> {
  return ctx.kube.list<Upload>('DataUpload', {
    namespace: s.metadata.namespace,
    labelSelector: scheduleSelector(s.metadata.name, run),
  });
}

/** Earlier runs' DataUploads still going: what concurrencyPolicy decides about. */
async function applyConcurrency(ctx: ScheduleContext, s: Schedule, run: string): Promise<string | undefined> {
  const earlier = (await uploadsOf(ctx, s)).filter(
    (du) => du.metadata.labels?.[scheduleLabels.run] !== run && !isDone(du) && !du.metadata.deletionTimestamp,
  );
  if (earlier.length === 0) return undefined;
  const names = earlier.map((du) => du.metadata.name).join(', ');
  const policy = s.spec.concurrencyPolicy ?? 'Forbid';
  if (policy === 'Forbid')
    return `DataUploads of an earlier run are not finished (${names}) and concurrencyPolicy is Forbid`;
  if (policy === 'Replace') {
    for (const du of earlier)
      await ctx.kube.patch(
        { kind: 'DataUpload', namespace: du.metadata.namespace, name: du.metadata.name },
        { spec: { cancel: true } },
      );
    ctx.log.info('canceled the unfinished DataUploads of an earlier run (concurrencyPolicy Replace)', {
      dataUploads: names,
    });
  }
  return undefined;
}

async function createUploads(
  ctx: ScheduleContext,
  s: Schedule,
  pvcs: string[],
  run: string,
  scheduledMs: number,
): Promise<RunPVC[]> {
  const out: RunPVC[] = [];
  for (const pvc of pvcs) {
    const du = uploadFor(s, pvc, run, scheduledMs);
    try {
      await ctx.kube.create(du);
      out.push({ pvc, dataUpload: du.metadata.name, phase: 'New' });
    } catch (err) {
      if (isAlreadyExists(err)) out.push({ pvc, dataUpload: du.metadata.name });
      // the dispatcher refuses e.g. a PVC that is not bound: this PVC fails this run, the others go on
      else if (err instanceof KubeError && (err.status === 422 || err.status === 403 || err.status === 400))
        out.push({ pvc, phase: 'Failed', message: err.message.slice(0, 4000) });
      else throw err;
    }
  }
  return out;
}

function runOutcome(pvcs: RunPVC[]): 'Running' | 'Succeeded' | 'Failed' {
  if (pvcs.some((p) => !p.phase || !terminalPhases.includes(p.phase))) return 'Running';
  return pvcs.length > 0 && pvcs.every((p) => p.phase === 'Completed') ? 'Succeeded' : 'Failed';
}

/** The run's PVCs with the phases their DataUploads show now. */
async function observe(ctx: ScheduleContext, s: Schedule, run: string, pvcs: RunPVC[]): Promise<RunPVC[]> {
  const byName = new Map((await uploadsOf(ctx, s, run)).map((du) => [du.metadata.name, du]));
  return pvcs.map((p) => {
    if (!p.dataUpload) return p;
    const du = byName.get(p.dataUpload);
    if (!du) return { ...p, phase: 'Failed', message: `DataUpload ${p.dataUpload} was deleted before it ended` };
    const phase = du.status?.phase ?? 'New';
    return phase === 'Completed' || !du.status?.message
      ? { pvc: p.pvc, dataUpload: p.dataUpload, phase }
      : { pvc: p.pvc, dataUpload: p.dataUpload, phase, message: du.status.message.slice(0, 4000) };
  });
}

/** Deletes what the keep-policy lets go, per PVC; the deleted DataUploads' finalizers free their data. */
async function applyRetention(ctx: ScheduleContext, s: Schedule): Promise<RetentionDone> {
  const rules = s.spec.retention ?? {};
  if (isEmptyPolicy(rules)) return nothingDeleted;
  const uploads = await uploadsOf(ctx, s);
  // the run may read its own namespace only: a restore from another namespace (crossNamespaceRestores) is not seen
  const downloads = await ctx.kube.list<DataDownload & KubeObject>('DataDownload', { namespace: s.metadata.namespace });
  return deletePlanned(ctx, 'DataUpload', planRetention(uploads, downloads, rules, s.spec.timeZone ?? 'UTC'));
}

export async function runSchedule(ctx: ScheduleContext, ref: ScheduleRef): Promise<Outcome> {
  const s = await readSchedule(ctx, ref);
  if (!s) return { outcome: 'Skipped', reason: `BackupSchedule ${ref.namespace}/${ref.name} does not exist.` };
  if (s.metadata.deletionTimestamp)
    return { outcome: 'Skipped', reason: `BackupSchedule ${ref.namespace}/${ref.name} is being deleted.` };
  if (s.spec.suspend)
    return { outcome: 'Skipped', reason: `BackupSchedule ${ref.namespace}/${ref.name} is suspended.` };
  const t = runTimeOf(ctx);
  const timing = await runTiming(ctx, s, t);
  return s.spec.appBackup ? runAppBackup(ctx, s, t, timing) : runUploads(ctx, s, t, timing);
}

/** The run of a schedule of DataUploads: one per PVC. */
async function runUploads(
  ctx: ScheduleContext,
  s: Schedule,
  t: RunTime,
  timing: (status: BackupScheduleStatus) => void,
): Promise<Outcome> {
  const { run, scheduledMs, scheduledTime } = t;
  const existing = await uploadsOf(ctx, s, run);
  if (existing.length === 0) {
    const refused = await applyConcurrency(ctx, s, run);
    if (refused) return skipRun(ctx, s, t, refused, timing);
    const delay = jitterDelay(s.metadata.uid ?? '', run, parseDuration(s.spec.jitter) ?? 0);
    if (delay > 0) await ctx.sleep(delay, ctx.signal);
  }
  const { present, missing } = await pvcsOf(ctx, s);
  let pvcs: RunPVC[] = [
    ...(await createUploads(ctx, s, present, run, scheduledMs)),
    ...missing.map((pvc): RunPVC => ({
      pvc,
      phase: 'Failed',
      message: `PersistentVolumeClaim ${pvc} does not exist in namespace ${s.metadata.namespace}`,
    })),
  ].sort((a, b) => a.pvc.localeCompare(b.pvc));
  if (pvcs.length === 0) {
    await recordRun(
      ctx,
      s,
      { run, scheduledTime, outcome: 'Failed', message: 'No PVC is named or matches the selector.' },
      timing,
    );
    return { outcome: 'Failed', reason: 'no PVC is named or matches the selector' };
  }
  s = await recordRun(ctx, s, { run, scheduledTime, outcome: 'Running', pvcs }, timing);
  await scheduleEvent(ctx, s, {
    type: 'Normal',
    reason: 'RunStarted',
    note: `Run ${run}: backing up ${pvcs.map((p) => p.pvc).join(', ')}.`,
  });

  for (;;) {
    const seen = await observe(ctx, s, run, pvcs);
    const changed = JSON.stringify(seen) !== JSON.stringify(pvcs);
    pvcs = seen;
    if (runOutcome(pvcs) !== 'Running') break;
    if (changed) s = await recordRun(ctx, s, { run, scheduledTime, outcome: 'Running', pvcs });
    await ctx.sleep(ctx.pollMs, ctx.signal);
  }
  const outcome = runOutcome(pvcs) === 'Succeeded' ? 'Succeeded' : 'Failed';
  const retention = outcome === 'Succeeded' ? await applyRetention(ctx, s) : nothingDeleted;
  const failed = pvcs
    .filter((p) => p.phase !== 'Completed')
    .map((p) => `${p.pvc} (${p.phase}${p.message ? `: ${p.message}` : ''})`);
  const message =
    outcome === 'Succeeded'
      ? `All ${pvcs.length} backup(s) Completed. ${retention.note}`.trim()
      : `Backups not completed: ${failed.join('; ')}`.slice(0, 4000);
  return finishRun(ctx, s, t, {
    outcome,
    message,
    pvcs,
    ...(retention.deleted.length ? { deleted: retention.deleted } : {}),
  });
}
