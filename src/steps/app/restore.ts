// app-restore (`ferry-step app-restore <namespace>/<name>`): one long-running step drives an AppRestore to its end,
// resumable from status alone. New: the restore is checked against the cluster (./restore-validate.ts) and its
// volumes written to status with phase InProgress, before any DataDownload exists; InProgress: the DataDownloads
// not made yet are created (one per volume), then polled, their phases and bytes copied into status.volumes,
// until every one has ended: all Completed → Completed, some → PartiallyFailed, none → Failed. spec.cancel or a
// deletion cancels every DataDownload and ends the restore Failed with the message "canceled".
import type { AppRestoreStatus, AppRestoreVolume } from '../../shared/api/app.ts';
import type { Condition } from '../../shared/api/types.ts';
import { rfc3339, setCondition, type ConditionInput } from '../../shared/kube/conditions.ts';
import type { Outcome } from '../context.ts';
import {
  cancelRequested,
  isRestoreTerminal,
  readRestore,
  restoreEvent,
  writeRestoreStatus,
  type Restore,
  type RestoreContext,
  type RestoreRef,
} from './restore-context.ts';
import {
  cancelDownloads,
  createDownload,
  isVolumeDone,
  observeVolumes,
  type DownloadSource,
} from './restore-downloads.ts';
import { backupNamespaceOf, planRestore, readBackup } from './restore-validate.ts';

/** status.volumes and the "done/total" kubectl shows beside them. */
function setVolumes(status: AppRestoreStatus, volumes: AppRestoreVolume[]): void {
  status.volumes = volumes;
  status.volumesDone = `${volumes.filter((v) => v.phase === 'Completed').length}/${volumes.length}`;
}

function withCondition(status: AppRestoreStatus, c: ConditionInput, now: Date): Condition[] {
  return setCondition(status.conditions, c, now);
}

/** New → FailedValidation, or InProgress with the planned volumes (no DataDownload made yet). */
async function start(ctx: RestoreContext, r: Restore): Promise<{ restore: Restore } | { ended: Outcome }> {
  const plan = await planRestore(ctx, r);
  if ('failure' in plan) {
    await writeRestoreStatus(ctx, r, ['New'], (status) => {
      status.phase = 'FailedValidation';
      status.message = plan.failure;
      status.completionTimestamp = rfc3339(ctx.now());
      status.conditions = withCondition(
        status,
        { type: 'Validated', status: 'False', reason: 'Invalid', message: plan.failure },
        ctx.now(),
      );
    });
    await restoreEvent(ctx, r, { type: 'Warning', reason: 'FailedValidation', note: plan.failure });
    return { ended: { outcome: 'Failed', reason: plan.failure } };
  }
  const volumes = plan.volumes.map((v) => ({ pvc: v.pvc, targetPVC: v.targetPVC, dataDownload: v.dataDownload }));
  const note = `Restoring ${volumes.map((v) => (v.pvc === v.targetPVC ? v.pvc : `${v.pvc} into ${v.targetPVC}`)).join(', ')} from AppBackup ${plan.backupNamespace}/${r.spec.appBackup.name}.`;
  const next = await writeRestoreStatus(ctx, r, ['New'], (status) => {
    status.phase = 'InProgress';
    status.message = note;
    setVolumes(status, volumes);
    status.startTimestamp = rfc3339(ctx.now());
    status.conditions = withCondition(
      status,
      {
        type: 'Validated',
        status: 'True',
        reason: 'Valid',
        message: 'The AppBackup and the target PVCs were checked.',
      },
      ctx.now(),
    );
  });
  await restoreEvent(ctx, next, { type: 'Normal', reason: 'RestoreStarted', note });
  return { restore: next };
}

/** Makes the DataDownloads of the volumes that have none yet, and records what came of each. */
async function createMissing(ctx: RestoreContext, r: Restore): Promise<Restore> {
  const volumes = r.status?.volumes ?? [];
  if (volumes.every((v) => v.phase !== undefined)) return r;
  const backup = await readBackup(ctx, r);
  const sourceOf = (pvc: string): DownloadSource | undefined => {
    const dataUpload = backup?.status?.volumes?.find((v) => v.pvc === pvc)?.dataUpload;
    return backup && dataUpload
      ? { backupNamespace: backupNamespaceOf(r), location: backup.spec.backupStorageLocation, dataUpload }
      : undefined;
  };
  const made: AppRestoreVolume[] = [];
  for (const v of volumes) made.push(v.phase === undefined ? await createDownload(ctx, r, v, sourceOf(v.pvc)) : v);
  for (const v of made.filter((m) => m.phase === 'Failed' && !volumes.find((o) => o.pvc === m.pvc)?.phase))
    await restoreEvent(ctx, r, { type: 'Warning', reason: 'VolumeFailed', note: `Volume ${v.pvc}: ${v.message}` });
  return writeRestoreStatus(ctx, r, ['InProgress'], (status) => {
    setVolumes(status, made);
  });
}

/** Every volume ended: the restore's end, by how many Completed. */
async function finish(ctx: RestoreContext, r: Restore, volumes: AppRestoreVolume[]): Promise<Outcome> {
  const done = volumes.filter((v) => v.phase === 'Completed');
  // no volume at all restores nothing: never Completed
  const phase =
    done.length > 0 && done.length === volumes.length ? 'Completed' : done.length > 0 ? 'PartiallyFailed' : 'Failed';
  const missed = volumes
    .filter((v) => v.phase !== 'Completed')
    .map((v) => `${v.pvc} (${v.phase}${v.message ? `: ${v.message}` : ''})`);
  const message =
    `Restored ${done.length} of ${volumes.length} volume(s)${missed.length ? `; not restored: ${missed.join('; ')}` : ''}.`.slice(
      0,
      4000,
    );
  await writeRestoreStatus(ctx, r, ['InProgress'], (status) => {
    status.phase = phase;
    status.message = message;
    setVolumes(status, volumes);
    status.completionTimestamp = rfc3339(ctx.now());
    status.conditions = withCondition(
      status,
      { type: 'Restored', status: phase === 'Completed' ? 'True' : 'False', reason: phase, message },
      ctx.now(),
    );
  });
  await restoreEvent(ctx, r, { type: phase === 'Completed' ? 'Normal' : 'Warning', reason: phase, note: message });
  return { outcome: phase === 'Completed' ? 'Advanced' : 'Failed', reason: message };
}

async function cancel(ctx: RestoreContext, r: Restore): Promise<Outcome> {
  const canceled = await cancelDownloads(ctx, r);
  const why = r.spec.cancel ? 'spec.cancel is set' : 'the AppRestore is being deleted';
  const note = `Canceled (${why}); ${canceled.length ? `told DataDownloads ${canceled.join(', ')} to stop` : 'no DataDownload was running'}.`;
  const volumes = await observeVolumes(ctx, r, r.status?.volumes ?? []);
  await writeRestoreStatus(ctx, r, ['New', 'InProgress'], (status) => {
    status.phase = 'Failed';
    status.message = 'canceled';
    if (volumes.length > 0) setVolumes(status, volumes);
    status.completionTimestamp = rfc3339(ctx.now());
    status.conditions = withCondition(
      status,
      { type: 'Restored', status: 'False', reason: 'Canceled', message: note },
      ctx.now(),
    );
  });
  await restoreEvent(ctx, r, { type: 'Warning', reason: 'Canceled', note });
  return { outcome: 'Canceled', reason: note };
}

export async function runAppRestore(ctx: RestoreContext, ref: RestoreRef): Promise<Outcome> {
  const gone: Outcome = { outcome: 'Skipped', reason: `AppRestore ${ref.namespace}/${ref.name} does not exist.` };
  let r = await readRestore(ctx, ref);
  if (!r) return gone;
  for (;;) {
    if (isRestoreTerminal(r)) return { outcome: 'Skipped', reason: `AppRestore is already ${r.status?.phase}.` };
    if (cancelRequested(r)) return cancel(ctx, r);
    if ((r.status?.phase ?? 'New') === 'New') {
      const started = await start(ctx, r);
      if ('ended' in started) return started.ended;
      r = started.restore;
      continue;
    }
    r = await createMissing(ctx, r);
    const seen = await observeVolumes(ctx, r, r.status?.volumes ?? []);
    if (seen.every(isVolumeDone)) return finish(ctx, r, seen);
    if (JSON.stringify(seen) !== JSON.stringify(r.status?.volumes))
      r = await writeRestoreStatus(ctx, r, ['InProgress'], (status) => {
        setVolumes(status, seen);
      });
    await ctx.sleep(ctx.pollMs, ctx.signal);
    const fresh = await readRestore(ctx, ref);
    if (!fresh) return gone;
    r = fresh;
  }
}
