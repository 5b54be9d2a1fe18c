// One run of the copy step on a DataCopy: a deleted one has its snapshot forgotten (./delete.ts); a canceled one
// ends Canceled; otherwise the attempt holds the finalizer, checks what the copy needs (./resolve.ts), marks the
// attempt InProgress, copies (./transfer.ts) and ends Completed with the copy's snapshot and stats, or records the
// failure (./failure.ts). Every status change shows in the DataUpload's status.copies too; its phase never changes.
import { copyTerminalPhases } from '../../shared/api/copy.ts';
import { copyFinalizer } from '../../shared/copy/step.ts';
import { SnapshotNotFoundError } from '../../engine/operations/errors.ts';
import { rfc3339, setCondition } from '../../shared/kube/conditions.ts';
import { addFinalizer } from '../../shared/kube/finalizers.ts';
import type { Outcome } from '../context.ts';
import { CancelWatch } from '../data/cancel-watch.ts';
import type { NamespacedRef } from '../namespaced-ref.ts';
import type { CopyContext, DataCopyObject } from './context.ts';
import { copyEvent, readDataCopy, writeCopyStatus } from './context.ts';
import { deleteCopy } from './delete.ts';
import { recordCopyFailure } from './failure.ts';
import { resolveCopy, type CopyPlan } from './resolve.ts';
import { copySnapshot, type Copied } from './transfer.ts';

export async function runCopy(ctx: CopyContext, ref: NamespacedRef): Promise<Outcome> {
  const found = await readDataCopy(ctx, ref);
  if (!found) return { outcome: 'Skipped', reason: `DataCopy ${ref.namespace}/${ref.name} does not exist` };
  if (found.metadata.deletionTimestamp) return deleteCopy(ctx, found);
  const phase = found.status?.phase ?? 'New';
  if (copyTerminalPhases.includes(phase)) return { outcome: 'Skipped', reason: `the DataCopy is ${phase} already` };
  if (found.spec.cancel) return cancel(ctx, found);
  const dc = await addFinalizer(ctx.kube, found, copyFinalizer);
  if (!dc) return { outcome: 'Skipped', reason: `DataCopy ${ref.namespace}/${ref.name} does not exist` };
  const plan = await resolveCopy(ctx, dc).catch((err: Error) => err);
  if (typeof plan === 'string') return recordCopyFailure(ctx, dc, undefined, plan, true);
  if (plan instanceof Error) return recordCopyFailure(ctx, dc, undefined, plan.message, false);
  const running = await startAttempt(ctx, dc, plan);
  const watch = new CancelWatch(ctx, running, ['InProgress']);
  watch.start();
  const timeout = plan.timeoutMs ? AbortSignal.timeout(plan.timeoutMs) : undefined;
  let copied: Copied;
  try {
    const signals = [ctx.signal, watch.signal, ...(timeout ? [timeout] : [])];
    copied = await copySnapshot(ctx, running, plan, AbortSignal.any(signals));
  } catch (err) {
    // the pod's SIGTERM: the phase stays, the next attempt resumes what this one stored
    if (ctx.signal.aborted) throw err;
    if (watch.reason === 'cancel') return cancel(ctx, running);
    if (watch.reason) return runCopy(ctx, ref);
    const permanent = err instanceof SnapshotNotFoundError;
    const cause = permanent
      ? `snapshot ${plan.sourceSnapshotID.slice(0, 8)} of DataUpload ${plan.upload.metadata.name} is not in its repository (${(err as Error).message})`
      : timeout?.aborted
        ? `the attempt ran longer than spec.operationTimeout ${running.spec.operationTimeout}; the next one resumes what it stored`
        : (err as Error).message;
    return recordCopyFailure(ctx, running, plan.upload, cause, permanent);
  } finally {
    watch.stop();
  }
  return complete(ctx, running, plan, copied);
}

async function startAttempt(ctx: CopyContext, dc: DataCopyObject, plan: CopyPlan): Promise<DataCopyObject> {
  const now = rfc3339(ctx.now());
  return writeCopyStatus(ctx, dc, (s) => {
    s.phase = 'InProgress';
    s.attempts = Math.max(ctx.settings.attempt ?? 0, (s.attempts ?? 0) + 1);
    if (ctx.settings.jobName) s.job = ctx.settings.jobName;
    s.sourceSnapshotID = plan.sourceSnapshotID;
    s.startTimestamp ??= now;
    delete s.nextAttemptTime;
    s.message = `copying snapshot ${plan.sourceSnapshotID.slice(0, 8)} from ${plan.sourceLocation} to ${dc.spec.backupStorageLocation}`;
  });
}

async function complete(ctx: CopyContext, dc: DataCopyObject, plan: CopyPlan, copied: Copied): Promise<Outcome> {
  const now = ctx.now();
  const what = copied.skipped
    ? `snapshot ${plan.sourceSnapshotID.slice(0, 8)} was in ${dc.spec.backupStorageLocation} already as ${copied.snapshotID.slice(0, 8)}`
    : `snapshot ${plan.sourceSnapshotID.slice(0, 8)} copied to ${dc.spec.backupStorageLocation} as ${copied.snapshotID.slice(0, 8)}: ${copied.stats.blobs} new blobs, ${copied.stats.bytesSent} bytes sent`;
  const retained =
    copied.retentionExtended === undefined
      ? ''
      : `; object-lock retention extended on ${copied.retentionExtended} files`;
  const written = await writeCopyStatus(ctx, dc, (s) => {
    s.phase = 'Completed';
    s.snapshotID = copied.snapshotID;
    s.sourceSnapshotID = plan.sourceSnapshotID;
    s.completionTimestamp = rfc3339(now);
    s.stats = copied.stats;
    s.progress = { bytesDone: s.progress?.totalBytes ?? 0, totalBytes: s.progress?.totalBytes ?? 0, percent: 100 };
    delete s.nextAttemptTime;
    s.message = what + retained;
    s.conditions = setCondition(s.conditions, { type: 'Copied', status: 'True', reason: 'Copied', message: what }, now);
  });
  await copyEvent(ctx, written, { type: 'Normal', reason: 'Copied', note: what + retained });
  return {
    outcome: 'Advanced',
    reason: what + retained,
    counters: { blobs: copied.stats.blobs, bytesSent: copied.stats.bytesSent },
  };
}

async function cancel(ctx: CopyContext, dc: DataCopyObject): Promise<Outcome> {
  const now = ctx.now();
  const message = 'spec.cancel is set: the copy stopped';
  const written = await writeCopyStatus(ctx, dc, (s) => {
    if (s.phase && copyTerminalPhases.includes(s.phase)) return false;
    s.phase = 'Canceled';
    s.completionTimestamp = rfc3339(now);
    delete s.nextAttemptTime;
    delete s.progress;
    s.message = message;
    s.conditions = setCondition(s.conditions, { type: 'Copied', status: 'False', reason: 'Canceled', message }, now);
  });
  await copyEvent(ctx, written, { type: 'Normal', reason: 'CopyCanceled', note: message });
  return { outcome: 'Canceled', reason: message };
}
