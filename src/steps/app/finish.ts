// The end of an AppBackup, whatever ends it: what the snapshot stage made is removed first (claim labels, the group
// snapshot, per-volume snapshots no DataUpload took), then the terminal phase is written, then the finalizer goes.
// In that order a crash leaves either work to redo or only a finalizer to remove, which a rerun does.
import type { AppBackupPhase, AppBackupVolume } from '../../shared/api/app.ts';
import { appBackupFinalizer } from '../../shared/app/names.ts';
import { rfc3339, setCondition } from '../../shared/kube/conditions.ts';
import { removeFinalizer } from '../../shared/kube/finalizers.ts';
import type { Outcome } from '../context.ts';
import { appEvent, bounded, writeStatus, type AppBackupContext, type AppBackupObject } from './context.ts';
import { postHooksOwed, runHookStage } from './hooks.ts';
import { releaseSnapshots } from './snapshots.ts';
import { totals } from './uploads.ts';

export interface Ending {
  phase: Extract<AppBackupPhase, 'Completed' | 'PartiallyFailed' | 'Failed' | 'Canceled'>;
  message: string;
  /** the volumes as last seen, when the DataUploads were looked at */
  volumes?: AppBackupVolume[];
}

const outcomes: Record<Ending['phase'], Outcome['outcome']> = {
  Completed: 'Advanced',
  PartiallyFailed: 'Failed',
  Failed: 'Failed',
  Canceled: 'Canceled',
};

/**
 * What is left once the AppBackup is terminal: a rerun after a crash between the status write and this, or after
 * the sweep gave up on the step (then post hooks may still be owed).
 */
export async function release(ctx: AppBackupContext, ab: AppBackupObject): Promise<void> {
  if (postHooksOwed(ab)) ab = (await runHookStage(ctx, ab, 'post')).ab;
  await releaseSnapshots(ctx, ab, ab.status?.volumes ?? []);
  await removeFinalizer(ctx.kube, ab, appBackupFinalizer);
}

export async function finish(ctx: AppBackupContext, ab: AppBackupObject, end: Ending): Promise<Outcome> {
  const message = bounded(end.message);
  await releaseSnapshots(ctx, ab, end.volumes ?? ab.status?.volumes ?? []);
  const written = await writeStatus(
    ctx,
    ab,
    ['New', undefined, 'InProgress', 'Uploading', 'UploadingPartialFailure'],
    (s, fresh) => {
      if (end.volumes) totals(s, end.volumes);
      s.phase = end.phase;
      s.message = message;
      s.completionTimestamp = rfc3339(ctx.now());
      s.conditions = setCondition(
        fresh.status?.conditions,
        {
          type: 'Uploaded',
          status: end.phase === 'Completed' ? 'True' : 'False',
          reason: end.phase === 'Completed' ? 'AllCompleted' : end.phase,
          message,
        },
        ctx.now(),
      );
    },
  );
  await removeFinalizer(ctx.kube, written, appBackupFinalizer);
  await appEvent(ctx, written, {
    type: end.phase === 'Completed' ? 'Normal' : 'Warning',
    reason: end.phase,
    note: message,
  });
  return { outcome: outcomes[end.phase], reason: message };
}

/** The end the volumes make once every DataUpload is terminal, in words. */
export function uploadEnding(phase: Ending['phase'], volumes: AppBackupVolume[], postFailed: boolean): Ending {
  const done = volumes.filter((v) => v.phase === 'Completed').length;
  const failed = volumes
    .filter((v) => v.phase !== 'Completed')
    .map((v) => `${v.pvc} (${v.phase ?? 'New'}${v.message ? `: ${v.message}` : ''})`);
  const post = postFailed ? ' A post hook failed (see status.hooks); the data is complete.' : '';
  const message =
    phase === 'Completed'
      ? `All ${volumes.length} volume(s) uploaded.`
      : `${done} of ${volumes.length} volume(s) uploaded${failed.length ? `; not uploaded: ${failed.join('; ')}` : ''}.${post}`;
  return { phase, message, volumes };
}
