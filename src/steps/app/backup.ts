// app-backup (`ferry-step app-backup <namespace>/<name>`): one long-running step drives an AppBackup's whole life,
// each stage recorded in status before the next, so a rerun resumes from status alone.
//   New: resolve and check the PVCs; FailedValidation names what is wrong; else the finalizer, InProgress.
//   InProgress: pre hooks, the file system freeze (spec.freeze) until the cut, snapshots (group or per volume),
//   post hooks, one DataUpload per volume; Uploading.
//   Uploading: follow the DataUploads until all end; Completed only when every volume Completed.
// spec.cancel or a deletion, at any stage before the end: post hooks if owed, DataUploads canceled, snapshots
// removed, Canceled. A rerun that finds pre hooks started and no snapshot recorded (the process died between the
// hooks) runs the post hooks and ends Failed without using any snapshot the dead run made: its cut may postdate the
// end of what the pre hooks held (a lock tied to the dead exec session), so it cannot be called consistent.
import { appBackupTerminalPhases, type AppBackupPhase } from '../../shared/api/app.ts';
import { appBackupFinalizer, groupSnapshotName } from '../../shared/app/names.ts';
import { rfc3339, setCondition } from '../../shared/kube/conditions.ts';
import { addFinalizer } from '../../shared/kube/finalizers.ts';
import type { Outcome } from '../context.ts';
import { cancelReason, cancelRequested, watchCancel } from './cancel.ts';
import { planSnapshots } from './classes.ts';
import { appEvent, PhaseMoved, readAppBackup, writeStatus } from './context.ts';
import type { AppBackupContext, AppBackupObject, AppRef } from './context.ts';
import { finish, release, uploadEnding, type Ending } from './finish.ts';
import { freeze, thaw } from './freeze.ts';
import { postHookFailed, postHooksDue, postHooksOwed, runHookStage } from './hooks.ts';
import { operationTimeoutMs, resolveVolumes } from './resolve.ts';
import { takeSnapshots } from './snapshots.ts';
import { cancelUploads, createUploads, ForeignUpload, isDone, observeUploads, totals, uploadPhase } from './uploads.ts';

export const interruptedMessage =
  'The step was interrupted between the pre and post hooks; post hooks ran, and no snapshot the interrupted run may have made is used (its cut may not be within the hooks). Create a new AppBackup to try again.';

const isTerminal = (phase: AppBackupPhase | undefined): boolean => appBackupTerminalPhases.includes(phase ?? 'New');

async function validate(ctx: AppBackupContext, ab: AppBackupObject): Promise<AppBackupObject | undefined> {
  const found = await resolveVolumes(ctx, ab);
  if ('problems' in found) {
    const message = found.problems.join('; ');
    const written = await writeStatus(ctx, ab, [undefined, 'New'], (s) => {
      s.phase = 'FailedValidation';
      s.message = message;
      s.completionTimestamp = rfc3339(ctx.now());
    });
    await appEvent(ctx, written, { type: 'Warning', reason: 'FailedValidation', note: message });
    return written;
  }
  const held = await addFinalizer(ctx.kube, ab, appBackupFinalizer);
  if (!held) return undefined;
  const written = await writeStatus(ctx, held, [undefined, 'New'], (s) => {
    s.phase = 'InProgress';
    s.startTimestamp ??= rfc3339(ctx.now());
    s.volumes = found.pvcs.map((pvc) => ({ pvc }));
    s.volumesDone = `0/${found.pvcs.length}`;
  });
  await appEvent(ctx, written, { type: 'Normal', reason: 'Started', note: `Backing up ${found.pvcs.join(', ')}.` });
  return written;
}

/** Ends an AppBackup still in InProgress: post hooks if owed, then the end. */
async function endInProgress(ctx: AppBackupContext, ab: AppBackupObject, end: Ending): Promise<Outcome> {
  if (postHooksOwed(ab)) ab = (await runHookStage(ctx, ab, 'post')).ab;
  return finish(ctx, ab, end);
}

async function snapshotsTaken(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  signal: AbortSignal,
): Promise<Ending | AppBackupObject> {
  const pre = await runHookStage(ctx, ab, 'pre', signal);
  ab = pre.ab;
  ctx.signal.throwIfAborted();
  if (signal.aborted)
    return { phase: 'Canceled', message: `Canceled: ${cancelReason(await readAppBackup(ctx, refOf(ab)))}.` };
  if (pre.failure) return { phase: 'Failed', message: `A pre hook failed, no snapshot was taken: ${pre.failure}` };
  const pvcs = (ab.status?.volumes ?? []).map((v) => v.pvc);
  const plan = await planSnapshots(ctx, ab, pvcs);
  let taken;
  let mayBeFrozen = false;
  // as soon as the cut is known, and whatever ends the wait: the freeze lasts no longer than the cut needs
  const thawNow = async (): Promise<void> => {
    if (!mayBeFrozen) return;
    ab = await thaw(ctx, (await readAppBackup(ctx, refOf(ab))) ?? ab);
    // only once thawed and recorded: a thaw that threw is tried again below, or by the next attempt
    mayBeFrozen = false;
  };
  try {
    if (ab.spec.freeze) {
      mayBeFrozen = true;
      const frozen = await freeze(ctx, ab, pvcs, signal);
      ab = frozen.ab;
      signal.throwIfAborted();
      if (frozen.failure)
        return { phase: 'Failed', message: `The file system freeze failed, no snapshot was taken: ${frozen.failure}` };
    }
    taken = await takeSnapshots(ctx, ab, pvcs, plan, signal, operationTimeoutMs(ab), thawNow);
  } catch (err) {
    if (ctx.signal.aborted) throw err;
    if (signal.aborted)
      return { phase: 'Canceled', message: `Canceled: ${cancelReason(await readAppBackup(ctx, refOf(ab)))}.` };
    return { phase: 'Failed', message: `The snapshots failed: ${(err as Error).message}` };
  } finally {
    await thawNow();
  }
  const why = plan.kind === 'PerVolume' ? plan.why : '';
  ab = await writeStatus(ctx, ab, ['InProgress'], (s, fresh) => {
    s.snapshotTime = taken.snapshotTime;
    s.consistency = plan.kind;
    if (plan.kind === 'Group') s.volumeGroupSnapshot = groupSnapshotName(fresh.metadata.uid!);
    s.volumes = (s.volumes ?? []).map((v) => ({ ...v, volumeSnapshot: taken.snapshots[v.pvc] }));
    s.conditions = setCondition(
      fresh.status?.conditions,
      plan.kind === 'Group'
        ? {
            type: 'GroupSnapshot',
            status: 'True',
            reason: 'Taken',
            message: 'All volumes were snapshotted at one instant.',
          }
        : {
            type: 'GroupSnapshot',
            status: 'False',
            reason: 'NotSupported',
            message: `No group snapshot (${why}): each volume's snapshot is consistent on its own only.`,
          },
      ctx.now(),
    );
  });
  await appEvent(ctx, ab, {
    type: 'Normal',
    reason: 'SnapshotsTaken',
    note:
      plan.kind === 'Group' ? 'One group snapshot of all volumes is ready.' : `Per-volume snapshots are cut (${why}).`,
  });
  return ab;
}

/**
 * The pod is ending (SIGTERM) between the hooks: the post hooks run now, within the grace period and not killed by
 * that signal, so the application is not left quiet until the next attempt (which then ends the backup Failed).
 */
async function releaseBeforeExit(ctx: AppBackupContext, ab: AppBackupObject): Promise<void> {
  const fresh = await readAppBackup(ctx, refOf(ab));
  if (fresh && postHooksOwed(fresh)) await runHookStage(ctx, fresh, 'post');
}

function refOf(ab: AppBackupObject): AppRef {
  return { namespace: ab.metadata.namespace!, name: ab.metadata.name };
}

async function inProgress(ctx: AppBackupContext, ab: AppBackupObject): Promise<AppBackupObject | Outcome> {
  if (ab.status?.hooksStarted && !ab.status.snapshotTime)
    return endInProgress(ctx, ab, { phase: 'Failed', message: interruptedMessage });
  if (!ab.status?.snapshotTime) {
    const watch = watchCancel(ctx, refOf(ab));
    let taken;
    try {
      taken = await snapshotsTaken(ctx, ab, AbortSignal.any([ctx.signal, watch.signal]));
    } catch (err) {
      if (ctx.signal.aborted) await releaseBeforeExit(ctx, ab);
      throw err;
    } finally {
      watch.stop();
    }
    if (!('metadata' in taken)) return endInProgress(ctx, (await readAppBackup(ctx, refOf(ab))) ?? ab, taken);
    ab = taken;
  }
  if (postHooksDue(ab)) ab = (await runHookStage(ctx, ab, 'post')).ab;
  const fresh = await readAppBackup(ctx, refOf(ab));
  if (!fresh || cancelRequested(fresh))
    return finish(ctx, fresh ?? ab, { phase: 'Canceled', message: `Canceled: ${cancelReason(fresh)}.` });
  let volumes;
  try {
    volumes = await createUploads(ctx, fresh);
  } catch (err) {
    if (!(err instanceof ForeignUpload)) throw err;
    // DataUploads of this AppBackup made before the foreign one was found are canceled with the rest
    await cancelUploads(ctx, fresh);
    return finish(ctx, fresh, { phase: 'Failed', message: err.message });
  }
  const written = await writeStatus(ctx, fresh, ['InProgress'], (s) => {
    totals(s, volumes);
    s.phase = 'Uploading';
  });
  await appEvent(ctx, written, {
    type: 'Normal',
    reason: 'Uploading',
    note: `The snapshots are taken; ${volumes.filter((v) => v.dataUpload).length} DataUpload(s) move the data.`,
  });
  return written;
}

/** Cancel during Uploading: every DataUpload is canceled and followed until it ends, within operationTimeout. */
async function cancelUploading(ctx: AppBackupContext, ab: AppBackupObject): Promise<Outcome> {
  await cancelUploads(ctx, ab);
  const deadline = ctx.now().getTime() + operationTimeoutMs(ab);
  let volumes = await observeUploads(ctx, ab);
  while (volumes.some((v) => v.dataUpload && !isDone(v)) && ctx.now().getTime() < deadline) {
    await ctx.sleep(ctx.pollMs, ctx.signal);
    volumes = await observeUploads(ctx, { ...ab, status: { ...ab.status, volumes } });
  }
  return finish(ctx, ab, { phase: 'Canceled', message: `Canceled: ${cancelReason(ab)}.`, volumes });
}

async function uploading(ctx: AppBackupContext, ab: AppBackupObject): Promise<Outcome> {
  for (;;) {
    const fresh = await readAppBackup(ctx, refOf(ab));
    if (!fresh) return { outcome: 'Skipped', reason: `AppBackup ${ab.metadata.name} is gone.` };
    ab = fresh;
    if (isTerminal(ab.status?.phase)) return { outcome: 'Skipped', reason: `AppBackup is ${ab.status?.phase} now.` };
    if (cancelRequested(ab)) return cancelUploading(ctx, ab);
    const volumes = await observeUploads(ctx, ab);
    const phase = uploadPhase(volumes, postHookFailed(ab));
    if (isTerminal(phase)) return finish(ctx, ab, uploadEnding(phase as Ending['phase'], volumes, postHookFailed(ab)));
    const before = ab.status?.phase;
    ab = await writeStatus(ctx, ab, ['Uploading', 'UploadingPartialFailure'], (s) => {
      const was = JSON.stringify(s);
      totals(s, volumes);
      s.phase = phase;
      return JSON.stringify(s) !== was;
    });
    if (phase === 'UploadingPartialFailure' && before !== phase)
      await appEvent(ctx, ab, {
        type: 'Warning',
        reason: 'VolumeFailed',
        note: `A volume failed while others upload: ${uploadEnding('PartiallyFailed', volumes, false).message}`,
      });
    await ctx.sleep(ctx.pollMs, ctx.signal);
  }
}

export async function runAppBackup(ctx: AppBackupContext, ref: AppRef): Promise<Outcome> {
  let ab = await readAppBackup(ctx, ref);
  try {
    for (;;) {
      if (!ab) return { outcome: 'Skipped', reason: `AppBackup ${ref.namespace}/${ref.name} does not exist.` };
      // an earlier attempt ended between a freeze and its thaw: the application's file systems come back first
      if (ab.status?.frozen?.length) ab = await thaw(ctx, ab);
      const phase = ab.status?.phase;
      if (isTerminal(phase)) {
        await release(ctx, ab);
        return { outcome: 'Skipped', reason: `AppBackup ${ref.namespace}/${ref.name} is ${phase}.` };
      }
      if (cancelRequested(ab)) {
        if (phase === 'Uploading' || phase === 'UploadingPartialFailure') return await cancelUploading(ctx, ab);
        return await endInProgress(ctx, ab, { phase: 'Canceled', message: `Canceled: ${cancelReason(ab)}.` });
      }
      if (!phase || phase === 'New') {
        ab = await validate(ctx, ab);
        if (ab?.status?.phase === 'FailedValidation') return { outcome: 'Failed', reason: ab.status.message ?? '' };
      } else if (phase === 'InProgress') {
        const next = await inProgress(ctx, ab);
        if (!('metadata' in next)) return next;
        ab = next;
      } else return await uploading(ctx, ab);
    }
  } catch (err) {
    if (err instanceof PhaseMoved) return { outcome: 'Skipped', reason: err.message };
    throw err;
  }
}
