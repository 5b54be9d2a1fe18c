// A DataCopy being deleted: its snapshot is forgotten in the destination repository (no prune: the location's
// maintenance frees the data, and on an object-lock location what is still retained stays until its retention ends),
// its entry leaves the DataUpload's status.copies, and the finalizer goes. A snapshot another DataCopy of the same
// backup also recorded in that location (the second found the first's copy there) is kept for it.
import { forget } from '../../engine/operations/forget.ts';
import { NoRepositoryError } from '../../engine/operations/errors.ts';
import { copyFinalizer } from '../../shared/copy/names.ts';
import { removeFinalizer } from '../../shared/kube/finalizers.ts';
import { LocationError } from '../../shared/location/access.ts';
import type { Outcome } from '../context.ts';
import { stepLocking } from '../data/repository.ts';
import type { CopyContext, DataCopyObject } from './context.ts';
import { copyEvent } from './context.ts';
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
  else reason = await forgetCopy(ctx, dc, snapshotID);
  await setUploadCopy(
    ctx.kube,
    { namespace: ns, dataUpload: dc.spec.dataUpload, dataCopy: dc.metadata.name },
    undefined,
  );
  await removeFinalizer(ctx.kube, dc, copyFinalizer);
  ctx.log.info(`DataCopy deleted: ${reason}`);
  return { outcome: 'Advanced', reason: `DataCopy ${ns}/${dc.metadata.name} deleted: ${reason}` };
}

async function forgetCopy(ctx: CopyContext, dc: DataCopyObject, snapshotID: string): Promise<string> {
  const short = snapshotID.slice(0, 8);
  let opened;
  try {
    opened = await openLocationRepository(ctx, dc.spec.backupStorageLocation, dc.metadata.namespace ?? '', 'forget');
  } catch (err) {
    if (err instanceof NoRepositoryError) return `the destination has no repository, so no snapshot ${short}`;
    if (!(err instanceof LocationError)) throw err;
    // without its location ferry cannot reach the copy; holding the finalizer would block the namespace for ever
    const note = `${err.message} Snapshot ${short} stays in its bucket.`;
    await copyEvent(ctx, dc, { type: 'Warning', reason: 'CopyDataKept', note });
    return note;
  }
  try {
    const { removed, retained } = await forget(opened.repo, [snapshotID], stepLocking(ctx, ctx.signal));
    if (retained.length > 0) return `snapshot ${short} is forgotten once its object-lock retention ends`;
    return removed.length > 0
      ? `snapshot ${short} forgotten in ${dc.spec.backupStorageLocation}`
      : `snapshot ${short} was gone`;
  } finally {
    await opened.close();
  }
}
