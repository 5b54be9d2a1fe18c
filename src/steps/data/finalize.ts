// finalize (Finalizing, Failing, Canceling): leave nothing behind and set the terminal phase. Exposure objects
// in ferry's namespace go on success, failure and cancel alike; the native VolumeSnapshot ferry took goes too,
// unless it is the backup itself (snapshotMoveData false, completed). A completed restore first hands its volume
// to the target PVC, which therefore binds only once the data is complete.
import type { DataUpload, FerryResource, Phase } from '../../shared/api/types.ts';
import { nextPhase } from '../../shared/api/phases.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { PersistentVolume, VolumeSnapshot, VolumeSnapshotContent } from '../../shared/kube/objects.ts';
import type { Outcome, StepContext } from '../context.ts';
import { bindRestoredVolume, keptByTarget } from './bind.ts';
import { labels, uidSelector } from '../../shared/step-job/contract.ts';
import { uidOf } from '../../shared/step-job/names.ts';
import { dataStep } from './description.ts';
import { releaseEarlier, keepsSnapshot, retainContent } from './retained-snapshot.ts';
import { transition } from './transition.ts';
import { waitFor } from './wait.ts';

const cleanupTimeoutMs = 2 * 60_000;

export async function finalize(ctx: StepContext, r: FerryResource): Promise<Outcome> {
  const from: Phase = r.status?.phase ?? 'New';
  let note = '';
  // the transfer's pod holds the exposed PVC until the pod object is gone, also once it has finished
  await removeTransferJobs(ctx, uidSelector(uidOf(r)));
  if (r.kind === 'DataDownload' && from === 'Finalizing') note = await bindRestoredVolume(ctx, r);
  const removed = await removeExposure(ctx, r);
  const kept = r.kind === 'DataUpload' ? await removeNativeSnapshot(ctx, r, from) : undefined;
  if (kept) await releaseEarlier(ctx, r as DataUpload);
  const to = nextPhase(r.kind, 'finalize', from);
  await transition(ctx, r, {
    to,
    reason: to,
    note: summary(r, to, note, removed),
    warning: to !== 'Completed',
    condition: { type: 'Succeeded', status: to === 'Completed' ? 'True' : 'False' },
    status: (s) => {
      s.completionTimestamp = ctx.now().toISOString();
      const du = s as NonNullable<DataUpload['status']>;
      if (kept) du.changeTracking = { ...du.changeTracking, retainedContent: kept };
    },
  });
  return { outcome: 'Advanced', reason: `${r.kind} ${to.toLowerCase()}`, counters: { objectsRemoved: removed } };
}

function summary(r: FerryResource, to: Phase, note: string, removed: number): string {
  const cleanup = removed > 0 ? ` Removed ${removed} temporary object(s).` : '';
  if (to === 'Completed')
    return `${r.kind === 'DataUpload' ? 'Backup' : 'Restore'} completed.${note ? ` ${note}` : ''}${cleanup}`;
  const why = r.status?.message ? ` ${r.status.message}` : '';
  return `${r.kind === 'DataUpload' ? 'Backup' : 'Restore'} ${to === 'Canceled' ? 'canceled' : 'failed'}.${why}${cleanup}`;
}

const exposureKinds = ['PersistentVolumeClaim', 'VolumeSnapshot', 'VolumeSnapshotContent', 'PersistentVolume'] as const;

/**
 * Deletes every object labelled with the resource's uid in ferry's namespace (and the cluster-scoped contents and
 * volumes), then waits until they are gone, so a terminal phase really means nothing is left.
 */
async function removeExposure(ctx: StepContext, r: FerryResource): Promise<number> {
  const selector = uidSelector(uidOf(r));
  const found: KubeObject[] = [];
  for (const kind of ['PersistentVolumeClaim', 'VolumeSnapshot', 'VolumeSnapshotContent'] as const) {
    found.push(
      ...(await ctx.kube.list(kind, {
        namespace: kind === 'VolumeSnapshotContent' ? undefined : ctx.ferryNamespace,
        labelSelector: selector,
      })),
    );
  }
  // a restored volume is labelled too; it is removed unless it already went to the target PVC
  for (const pv of await ctx.kube.list<PersistentVolume>('PersistentVolume', { labelSelector: selector })) {
    if (!(r.kind === 'DataDownload' && keptByTarget(pv, r))) found.push(pv);
  }
  // snapshots before their contents, claims before volumes: dependents first
  const order = ['VolumeSnapshot', 'PersistentVolumeClaim', 'VolumeSnapshotContent', 'PersistentVolume'];
  found.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
  for (const obj of found) {
    await ctx.kube
      .delete(
        {
          kind: obj.kind as (typeof exposureKinds)[number],
          namespace: obj.metadata.namespace,
          name: obj.metadata.name,
        },
        { uid: obj.metadata.uid },
      )
      .catch(ignoreGoneOrReplaced);
  }
  const gone = await waitFor(ctx, cleanupTimeoutMs, async () => {
    for (const obj of found) {
      const still = await ctx.kube.get({
        kind: obj.kind as (typeof exposureKinds)[number],
        namespace: obj.metadata.namespace,
        name: obj.metadata.name,
      });
      if (still && still.metadata.uid === obj.metadata.uid) return undefined;
    }
    return true;
  });
  if (!gone)
    throw new Error(
      `Temporary objects of ${r.kind} ${r.metadata.namespace}/${r.metadata.name} were not deleted within two minutes; the step will try again.`,
    );
  return found.length;
}

/**
 * A finished pod still holds its PVC (the pvc-protection finalizer lets a claim go only once no pod object names
 * it), so the transfer Jobs go first, their pods with them. Their outcome stays in the resource's status.
 */
async function removeTransferJobs(ctx: StepContext, selector: string): Promise<void> {
  const jobs = await ctx.kube.list('Job', {
    namespace: ctx.ferryNamespace,
    labelSelector: `${selector},${labels.step}=transfer`,
  });
  for (const job of jobs) {
    await ctx.kube
      .delete(
        { kind: 'Job', namespace: ctx.ferryNamespace, name: job.metadata.name },
        { uid: job.metadata.uid, propagationPolicy: 'Background' },
      )
      .catch(ignoreGoneOrReplaced);
  }
}

function ignoreGoneOrReplaced(err: unknown): void {
  if ((err as { status?: number }).status === 409) return;
  throw err;
}

/**
 * The native snapshot ferry took goes, except when it is the backup (snapshotMoveData false and completed). A
 * snapshot named in spec.csiSnapshot is the user's to keep, unless deleteWhenDone hands it over (Velero does):
 * then its content is switched to Delete first, so the storage snapshot goes with it whatever the class said.
 */
async function removeNativeSnapshot(ctx: StepContext, du: DataUpload, from: Phase): Promise<string | undefined> {
  const handedOver = du.spec.csiSnapshot?.deleteWhenDone === true ? du.spec.csiSnapshot.volumeSnapshot : undefined;
  const name = handedOver ?? du.status?.volumeSnapshot;
  if (!name || (from === 'Finalizing' && du.spec.snapshotMoveData === false)) return;
  const vs = await ctx.kube.get<VolumeSnapshot>({ kind: 'VolumeSnapshot', namespace: du.metadata.namespace, name });
  if (!vs || !(handedOver || vs.metadata.labels?.[labels.uid] === du.metadata.uid)) return;
  const contentName = vs.status?.boundVolumeSnapshotContentName;
  // ferry's own snapshot of a block volume stays in the driver as the base of the next backup's changed blocks
  const keep = !handedOver && contentName && keepsSnapshot(du, from === 'Finalizing') ? contentName : undefined;
  if (keep) await retainContent(ctx, keep);
  if (handedOver && contentName) {
    const content = await ctx.kube.get<VolumeSnapshotContent>({ kind: 'VolumeSnapshotContent', name: contentName });
    if (content && content.spec.deletionPolicy !== 'Delete')
      await ctx.kube.patch(
        { kind: 'VolumeSnapshotContent', name: contentName },
        { spec: { deletionPolicy: 'Delete' } },
      );
  }
  await ctx.kube
    .delete({ kind: 'VolumeSnapshot', namespace: du.metadata.namespace, name }, { uid: vs.metadata.uid })
    .catch(ignoreGoneOrReplaced);
  ctx.log.info('deleted the native VolumeSnapshot', { volumeSnapshot: name });
  return keep;
}

export const finalizeStep = dataStep('finalize', finalize);
