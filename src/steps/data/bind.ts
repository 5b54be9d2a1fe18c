// Handing a restored volume to the target PVC, as Velero's data mover does: the PV is kept (reclaim policy
// Retain) while the restore PVC in ferry's namespace is deleted, its claimRef is pointed at the target PVC and it
// is labelled for it, then the target PVC is created bound to it (or, if the user made it already, the volume
// controller binds the two). The target PVC therefore has no volume until the data is complete. Every stage is
// checked before it is done, so a finalize run again picks up where a crashed one stopped.
import type { DataDownload } from '../../shared/api/types.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import { labelValue } from '../../shared/kube/names.ts';
import type { PersistentVolume, PersistentVolumeClaim } from '../../shared/kube/objects.ts';
import { labels, resourceLabels, uidSelector } from '../../shared/step-job/contract.ts';
import type { StepContext } from '../context.ts';
import { StepFailure } from './failure.ts';
import { exposureName, uidOf } from '../../shared/step-job/names.ts';
import { waitFor } from './wait.ts';

/** On the restored PV: which PVC it was restored for (a PVC made beforehand may select it with this label). */
export const restoreLabel = 'ferry.dev/dynamic-pv-restore';
const reclaimAnnotation = 'ferry.dev/reclaim-policy';
const bindTimeoutMs = 2 * 60_000;

/** `<namespace>.<pvc>`, shortened with a hash when that is too long for a label value. */
export function restoreLabelValue(namespace: string, pvc: string): string {
  return labelValue(`${namespace}.${pvc}`);
}

/** Whether a restored PV already belongs to the DataDownload's target PVC (and must survive cleanup). */
export function keptByTarget(pv: PersistentVolume, dd: DataDownload): boolean {
  const ref = pv.spec.claimRef;
  return ref?.namespace === dd.metadata.namespace && ref?.name === dd.spec.targetPVC.name;
}

export async function bindRestoredVolume(ctx: StepContext, dd: DataDownload): Promise<string> {
  const namespace = dd.metadata.namespace!;
  const targetName = dd.spec.targetPVC.name;
  const restoreKey = { kind: 'PersistentVolumeClaim' as const, namespace: ctx.ferryNamespace, name: exposureName(dd) };
  const pv = await restoredVolume(ctx, dd, await ctx.kube.get<PersistentVolumeClaim>(restoreKey));
  const pvKey = { kind: 'PersistentVolume' as const, name: pv.metadata.name };

  // keep the volume when its restore PVC goes
  if (pv.spec.persistentVolumeReclaimPolicy !== 'Retain' || !pv.metadata.labels?.[labels.uid]) {
    await ctx.kube.patch(pvKey, {
      metadata: {
        labels: { ...resourceLabels(dd), [restoreLabel]: restoreLabelValue(namespace, targetName) },
        annotations: {
          [reclaimAnnotation]:
            pv.metadata.annotations?.[reclaimAnnotation] ?? pv.spec.persistentVolumeReclaimPolicy ?? 'Delete',
        },
      },
      spec: { persistentVolumeReclaimPolicy: 'Retain' },
    });
  }
  if (await ctx.kube.delete(restoreKey)) {
    const gone = await waitFor(ctx, bindTimeoutMs, async () => ((await ctx.kube.get(restoreKey)) ? undefined : true));
    if (!gone)
      throw new Error(
        `The restore PVC ${ctx.ferryNamespace}/${restoreKey.name} was not deleted within two minutes; the step will try again.`,
      );
  }

  const target = await ctx.kube.get<PersistentVolumeClaim>({
    kind: 'PersistentVolumeClaim',
    namespace,
    name: targetName,
  });
  if (target?.spec.volumeName && target.spec.volumeName !== pv.metadata.name) {
    throw new StepFailure(
      'TargetPVCBound',
      `The target PVC ${namespace}/${targetName} was bound to another volume (${target.spec.volumeName}) while the data was restored.`,
    );
  }
  // a PVC made beforehand may select its volume by labels (Velero's does): the volume carries them, except
  // ferry's own, by which ferry finds what belongs to a resource
  const wanted = Object.fromEntries(
    Object.entries(target?.spec.selector?.matchLabels ?? {}).filter(([k]) => !k.startsWith('ferry.dev/')),
  );
  if (Object.entries(wanted).some(([k, v]) => pv.metadata.labels?.[k] !== v))
    await ctx.kube.patch(pvKey, { metadata: { labels: wanted } });
  const ref = pv.spec.claimRef;
  const uid = target?.metadata.uid ?? null;
  if (ref?.namespace !== namespace || ref?.name !== targetName || (uid && ref?.uid !== uid)) {
    await ctx.kube.patch(pvKey, {
      spec: {
        claimRef: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace,
          name: targetName,
          uid,
          resourceVersion: null,
        },
      },
    });
  }
  if (!target && dd.spec.targetPVC.awaitClaim)
    throw new StepFailure(
      'TargetPVCMissing',
      `The target PVC ${namespace}/${targetName} was deleted while the data was restored; spec.targetPVC.awaitClaim forbids ferry to create it.`,
    );
  if (!target) await createTarget(ctx, dd, pv);

  const bound = await waitFor(ctx, bindTimeoutMs, async () => {
    const pvc = await ctx.kube.get<PersistentVolumeClaim>({
      kind: 'PersistentVolumeClaim',
      namespace,
      name: targetName,
    });
    return pvc?.status?.phase === 'Bound' && pvc.spec.volumeName === pv.metadata.name ? pvc : undefined;
  });
  if (!bound)
    throw new Error(
      `The target PVC ${namespace}/${targetName} did not bind to the restored volume ${pv.metadata.name} within two minutes; the step will try again.`,
    );

  // the volume is the user's now: its own reclaim policy back, ferry's bookkeeping off
  const fresh = await ctx.kube.get<PersistentVolume>(pvKey);
  const policy = fresh?.metadata.annotations?.[reclaimAnnotation];
  if (policy) {
    await ctx.kube.patch(pvKey, {
      metadata: { annotations: { [reclaimAnnotation]: null } },
      spec: { persistentVolumeReclaimPolicy: policy },
    });
  }
  return `PVC ${namespace}/${targetName} is bound to the restored volume ${pv.metadata.name}.`;
}

/** The volume the restore PVC got, found through the PVC or, once that is gone, by the resource's label. */
async function restoredVolume(
  ctx: StepContext,
  dd: DataDownload,
  restorePVC: PersistentVolumeClaim | undefined,
): Promise<PersistentVolume> {
  const name = restorePVC?.spec.volumeName;
  const pv = name
    ? await ctx.kube.get<PersistentVolume>({ kind: 'PersistentVolume', name })
    : (await ctx.kube.list<PersistentVolume>('PersistentVolume', { labelSelector: uidSelector(uidOf(dd)) }))[0];
  if (!pv)
    throw new StepFailure(
      'RestoredVolumeMissing',
      `The volume the data was restored into is gone (restore PVC ${ctx.ferryNamespace}/${exposureName(dd)}).`,
    );
  return pv;
}

async function createTarget(ctx: StepContext, dd: DataDownload, pv: PersistentVolume): Promise<void> {
  const pvc: PersistentVolumeClaim = {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: dd.spec.targetPVC.name,
      namespace: dd.metadata.namespace,
      labels: { [restoreLabel]: restoreLabelValue(dd.metadata.namespace!, dd.spec.targetPVC.name) },
    },
    spec: {
      accessModes: pv.spec.accessModes ?? dd.spec.targetPVC.accessModes ?? ['ReadWriteOnce'],
      // "" rather than absent: a default class must not be filled in, it would have to match the volume's
      storageClassName: pv.spec.storageClassName ?? '',
      volumeMode: pv.spec.volumeMode ?? 'Filesystem',
      resources: { requests: { storage: pv.spec.capacity?.storage ?? dd.spec.targetPVC.size ?? '1Gi' } },
      volumeName: pv.metadata.name,
    },
  };
  try {
    await ctx.kube.create(pvc);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}
