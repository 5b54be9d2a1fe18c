// snapshot (DataUpload, phase New): take a CSI VolumeSnapshot of the source PVC (or use the one named in
// spec.csiSnapshot), wait until it is ready within operationTimeout, and record it with the PVC's volume mode.
// With snapshotMoveData false the snapshot is the backup: the resource goes straight to Finalizing.
import type { DataUpload, FerryResource } from '../../shared/api/types.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import type { PersistentVolumeClaim, VolumeSnapshot } from '../../shared/kube/objects.ts';
import type { Outcome, StepContext } from '../context.ts';
import { parseDuration } from '../../shared/api/duration.ts';
import { dataStep } from './description.ts';
import { StepFailure } from './failure.ts';
import { addFinalizer } from './finalizer.ts';
import { resourceLabels } from '../../shared/step-job/contract.ts';
import { nativeSnapshotName } from '../../shared/step-job/names.ts';
import { transition } from './transition.ts';
import { waitFor } from './wait.ts';

export const defaultOperationTimeoutMs = 10 * 60_000;

export function operationTimeoutMs(r: FerryResource): number {
  try {
    return parseDuration(r.spec.operationTimeout) ?? defaultOperationTimeoutMs;
  } catch (err) {
    throw new StepFailure('InvalidSpec', `spec.operationTimeout: ${(err as Error).message}.`);
  }
}

/** What is left of operationTimeout, counted from `since` (ms since the epoch), so a step run again does not wait
 * afresh. */
export function operationTimeLeftMs(ctx: StepContext, r: FerryResource, since: number): number {
  return Math.max(0, since + operationTimeoutMs(r) - ctx.now().getTime());
}

export async function snapshot(ctx: StepContext, r: FerryResource): Promise<Outcome> {
  if (r.kind !== 'DataUpload') return { outcome: 'Skipped', reason: 'a DataDownload has no snapshot step.' };
  let du: DataUpload = r;
  const namespace = du.metadata.namespace!;
  const pvc = await ctx.kube.get<PersistentVolumeClaim>({
    kind: 'PersistentVolumeClaim',
    namespace,
    name: du.spec.sourcePVC,
  });
  if (!pvc)
    throw new StepFailure('SourcePVCNotFound', `The source PVC ${namespace}/${du.spec.sourcePVC} does not exist.`);
  if (du.spec.snapshotMoveData !== false) du = ((await addFinalizer(ctx, du)) as DataUpload | undefined) ?? du;

  const name = du.spec.csiSnapshot?.volumeSnapshot ?? nativeSnapshotName(du);
  const ours = !du.spec.csiSnapshot?.volumeSnapshot;
  if (ours) await createSnapshot(ctx, du, name);
  let last = await ctx.kube.get<VolumeSnapshot>({ kind: 'VolumeSnapshot', namespace, name });
  // the clock starts when ferry's snapshot was made, so a step run again does not wait afresh
  const since =
    ours && last?.metadata.creationTimestamp ? Date.parse(last.metadata.creationTimestamp) : ctx.startedAt.getTime();
  const timeoutMs = operationTimeLeftMs(ctx, du, since);
  const ready = await waitFor(ctx, timeoutMs, async () => {
    last = await ctx.kube.get<VolumeSnapshot>({ kind: 'VolumeSnapshot', namespace, name });
    if (!last)
      throw new StepFailure(
        'SnapshotNotFound',
        `The VolumeSnapshot ${namespace}/${name} does not exist${ours ? ' (it was deleted while ferry waited for it)' : ''}.`,
      );
    return last.status?.readyToUse === true ? last : undefined;
  });
  if (!ready) {
    const error = last?.status?.error?.message;
    throw new StepFailure(
      'SnapshotTimeout',
      `The VolumeSnapshot ${namespace}/${name} was not ready within ${du.spec.operationTimeout ?? '10m'}${error ? `: ${error}` : ''}.`,
    );
  }

  const moveData = du.spec.snapshotMoveData !== false;
  const volumeMode = pvc.spec.volumeMode ?? 'Filesystem';
  await transition(ctx, du, {
    to: moveData ? 'Accepted' : 'Finalizing',
    reason: 'SnapshotReady',
    note: `VolumeSnapshot ${namespace}/${name} of PVC ${du.spec.sourcePVC} is ready${ready.status?.restoreSize ? ` (${ready.status.restoreSize})` : ''}${moveData ? '' : '; keeping it as the backup (snapshotMoveData is false)'}.`,
    condition: { type: 'SnapshotReady', status: 'True' },
    status: (s) => {
      s.volumeSnapshot = name;
      s.volumeMode = volumeMode;
      if (pvc.spec.storageClassName) s.storageClassName = pvc.spec.storageClassName;
      s.startTimestamp ??= ctx.startedAt.toISOString();
    },
  });
  return { outcome: 'Advanced', reason: `snapshot ${name} ready` };
}

async function createSnapshot(ctx: StepContext, du: DataUpload, name: string): Promise<void> {
  const vs: VolumeSnapshot = {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name, namespace: du.metadata.namespace, labels: resourceLabels(du) },
    spec: {
      source: { persistentVolumeClaimName: du.spec.sourcePVC },
      ...(du.spec.csiSnapshot?.snapshotClass ? { volumeSnapshotClassName: du.spec.csiSnapshot.snapshotClass } : {}),
    },
  };
  try {
    await ctx.kube.create(vs);
    ctx.log.info('created the VolumeSnapshot', { volumeSnapshot: name });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

export const snapshotStep = dataStep('snapshot', snapshot);
