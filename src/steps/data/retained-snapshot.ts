// The storage snapshot a block backup keeps for the next one: changed-block tracking compares two snapshots the
// driver still holds, so the last completed block backup of a PVC keeps its CSI snapshot (its VolumeSnapshotContent
// switched to Retain, the VolumeSnapshot itself deleted as always) until the next one completes, which then deletes
// it with the storage snapshot. One kept snapshot per PVC at most, recorded in status.changeTracking.retainedContent.
import type { DataUpload } from '../../shared/api/types.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { VolumeSnapshotContent } from '../../shared/kube/objects.ts';
import type { StepContext } from '../context.ts';

/** Whether a backup leaving finalize in `completed` state keeps its snapshot for the next one. */
export function keepsSnapshot(du: DataUpload, completed: boolean): boolean {
  return completed && du.status?.volumeMode === 'Block' && !!du.status.changeTracking?.snapshotHandle;
}

/** Switches the content to Retain, so deleting its VolumeSnapshot leaves the storage snapshot in the driver. */
export async function retainContent(ctx: StepContext, contentName: string): Promise<void> {
  await ctx.kube.patch({ kind: 'VolumeSnapshotContent', name: contentName }, { spec: { deletionPolicy: 'Retain' } });
  ctx.log.info('kept the CSI snapshot as the base of the next backup', { volumeSnapshotContent: contentName });
}

/** Deletes the snapshots earlier backups of the same PVC kept: `du` is the next one's base now. */
export async function releaseEarlier(ctx: StepContext, du: DataUpload): Promise<void> {
  const all = await ctx.kube.list<DataUpload & KubeObject>('DataUpload', { namespace: du.metadata.namespace });
  for (const other of all) {
    const kept = other.status?.changeTracking?.retainedContent;
    if (!kept || other.metadata.uid === du.metadata.uid || other.spec.sourcePVC !== du.spec.sourcePVC) continue;
    await releaseContent(ctx, kept);
    await ctx.kube.patch(
      { kind: 'DataUpload', namespace: other.metadata.namespace, name: other.metadata.name },
      { status: { changeTracking: { retainedContent: null } } },
      { status: true },
    );
  }
}

/** Deletes a kept content with its storage snapshot (Delete first, whatever it says now). */
export async function releaseContent(ctx: StepContext, name: string): Promise<void> {
  const content = await ctx.kube.get<VolumeSnapshotContent>({ kind: 'VolumeSnapshotContent', name });
  if (!content) return;
  if (content.spec.deletionPolicy !== 'Delete')
    await ctx.kube.patch({ kind: 'VolumeSnapshotContent', name }, { spec: { deletionPolicy: 'Delete' } });
  await ctx.kube.delete({ kind: 'VolumeSnapshotContent', name }, { uid: content.metadata.uid });
  ctx.log.info('deleted the CSI snapshot an earlier backup kept', { volumeSnapshotContent: name });
}
