// A DataCopy being deleted: its snapshot is forgotten in the destination repository (no prune: the location's
// maintenance frees the data), its entry leaves the DataUpload's status.copies, and the finalizer goes. A snapshot
// another DataCopy of the same backup also recorded in that location (the second found the first's copy there) is
// kept for it. On an object-lock location a snapshot file still retained cannot be removed yet: the finalizer stays
// and status.nextAttemptTime says when the dispatcher runs the step again (the retention's end, or in an hour for a
// legal hold).
import { forget } from '../../engine/operations/forget.ts';
import { NoRepositoryError } from '../../engine/operations/errors.ts';
import { copyFinalizer } from '../../shared/copy/step.ts';
import { rfc3339 } from '../../shared/kube/conditions.ts';
import { removeFinalizer } from '../../shared/kube/finalizers.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { Outcome } from '../context.ts';
import { stepLocking } from '../data/repository.ts';
import type { CopyContext, DataCopyObject } from './context.ts';
import { copyEvent, writeCopyStatus } from './context.ts';
import { setUploadCopy } from './mirror.ts';
import { openLocationRepository } from './repositories.ts';
import type { UploadObject } from './resolve.ts';

export async function deleteCopy(ctx: CopyContext, dc: DataCopyObject): Promise<Outcome> {
  const ns = dc.metadata.namespace ?? '';
  const snapshotID = dc.status?.snapshotID;
  const upload = await ctx.kube.get<UploadObject>({ kind: 'DataUpload', namespace: ns, name: dc.spec.dataUpload });
  const sharedWith = (upload?.status?.copies ?? []).find(
    (c) =>
      c.dataCopy !== dc.metadata.name &&
      c.backupStorageLocation === dc.spec.backupStorageLocation &&
      c.snapshotID === snapshotID,
  );
  let reason: string;
  if (!snapshotID) reason = 'no copy was made';
  else if (sharedWith)
    reason = `snapshot ${snapshotID.slice(0, 8)} is kept: DataCopy ${sharedWith.dataCopy} holds it too`;
  else {
    const forgotten = await forgetCopy(ctx, dc, snapshotID);
    if (typeof forgotten !== 'string') return waitForRetention(ctx, dc, snapshotID, forgotten.until);
    reason = forgotten;
  }
  await setUploadCopy(
    ctx.kube,
    { namespace: ns, dataUpload: dc.spec.dataUpload, dataCopy: dc.metadata.name },
    undefined,
  );
  await removeFinalizer(ctx.kube, dc, copyFinalizer);
  ctx.log.info(`DataCopy deleted: ${reason}`);
  return { outcome: 'Advanced', reason: `DataCopy ${ns}/${dc.metadata.name} deleted: ${reason}` };
}

/** What was done, or when the snapshot's Object Lock retention ends (null: a legal hold). */
async function forgetCopy(
  ctx: CopyContext,
  dc: DataCopyObject,
  snapshotID: string,
): Promise<string | { until: Date | null }> {
  const short = snapshotID.slice(0, 8);
  const location = dc.spec.backupStorageLocation;
  const bsl = await ctx.kube.get<KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ctx.ferryNamespace,
    name: location,
  });
  if (!bsl) {
    // without its location ferry cannot reach the copy; holding the finalizer would block the namespace for ever
    const note = `BackupStorageLocation ${location} no longer exists, so snapshot ${short} stays in its bucket.`;
    await copyEvent(ctx, dc, { type: 'Warning', reason: 'CopyDataKept', note });
    return note;
  }
  let opened;
  try {
    opened = await openLocationRepository(ctx, location, dc.metadata.namespace ?? '', 'forget');
  } catch (err) {
    if (err instanceof NoRepositoryError) return `the destination has no repository, so no snapshot ${short}`;
    // a Secret missing or storage unreachable: the finalizer stays and the next run tries again
    throw err;
  }
  try {
    const { removed, retained } = await forget(opened.repo, [snapshotID], stepLocking(ctx, ctx.signal));
    if (retained.length > 0) return { until: retained[0].until };
    return removed.length > 0
      ? `snapshot ${short} forgotten in ${dc.spec.backupStorageLocation}`
      : `snapshot ${short} was gone`;
  } finally {
    await opened.close();
  }
}

async function waitForRetention(
  ctx: CopyContext,
  dc: DataCopyObject,
  snapshotID: string,
  until: Date | null,
): Promise<Outcome> {
  const next = until ? new Date(until.getTime() + 60_000) : new Date(ctx.now().getTime() + 3600_000);
  const held = until ? `S3 Object Lock retains it until ${rfc3339(until)}` : 'an S3 legal hold keeps it';
  const message = `snapshot ${snapshotID.slice(0, 8)} cannot be forgotten yet: ${held}; the finalizer stays and the step runs again at ${rfc3339(next)}`;
  await writeCopyStatus(ctx, dc, (s) => {
    s.nextAttemptTime = rfc3339(next);
    s.message = message;
  });
  ctx.log.info(message);
  return { outcome: 'Waiting', reason: message };
}
