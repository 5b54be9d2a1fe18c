// expose: make the data reachable from a pod in ferry's namespace.
// Backup (DataUpload, Accepted): a VolumeSnapshot cannot be used from another namespace, so, as Velero's exposer
// does, the snapshot's content is cloned as a pre-provisioned VolumeSnapshotContent (same snapshotHandle,
// deletionPolicy Retain, so deleting the clone never deletes the snapshot) bound to a new VolumeSnapshot in
// ferry's namespace, and a PVC is made from that. The transfer pod mounts it (read-only).
// Restore (DataDownload, New): an empty PVC in ferry's namespace of the target's size, class and volume mode; the
// transfer pod fills it and finalize hands its volume to the target PVC.
import type { DataDownload, DataUpload, FerryResource } from '../../shared/api/types.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type {
  PersistentVolumeClaim,
  StorageClass,
  VolumeSnapshot,
  VolumeSnapshotContent,
} from '../../shared/kube/objects.ts';
import { pvcRequest } from '../../shared/kube/objects.ts';
import { formatQuantity, maxQuantity, parseQuantity } from '../../shared/kube/quantity.ts';
import type { Outcome, StepContext } from '../context.ts';
import { dataStep } from './description.ts';
import { StepFailure } from './failure.ts';
import { resourceLabels } from '../../shared/step-job/contract.ts';
import { exposureName } from '../../shared/step-job/names.ts';
import { operationTimeLeftMs, operationTimeoutMs } from './snapshot.ts';
import { transition } from './transition.ts';
import { waitFor } from './wait.ts';

/** A StorageClass annotation saying its driver can provision ReadOnlyMany volumes from snapshots. */
export const backupAccessModeAnnotation = 'ferry.dev/backup-access-mode';

export async function expose(ctx: StepContext, r: FerryResource): Promise<Outcome> {
  return r.kind === 'DataUpload' ? exposeBackup(ctx, r) : exposeRestore(ctx, r);
}

async function createIfMissing(ctx: StepContext, obj: KubeObject): Promise<void> {
  try {
    await ctx.kube.create(obj);
    ctx.log.info(`created ${obj.kind} ${obj.metadata.name}`, { namespace: obj.metadata.namespace });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

async function exposeBackup(ctx: StepContext, du: DataUpload): Promise<Outcome> {
  const namespace = du.metadata.namespace!;
  const sourceName = du.status?.volumeSnapshot;
  if (!sourceName)
    throw new StepFailure(
      'SnapshotNotRecorded',
      `${du.kind} ${namespace}/${du.metadata.name} records no VolumeSnapshot; the snapshot step did not finish.`,
    );
  const source = await ctx.kube.get<VolumeSnapshot>({ kind: 'VolumeSnapshot', namespace, name: sourceName });
  const contentName = source?.status?.boundVolumeSnapshotContentName;
  if (!source || !contentName)
    throw new StepFailure(
      'SnapshotNotFound',
      `The VolumeSnapshot ${namespace}/${sourceName} is gone or bound to no content.`,
    );
  const content = await ctx.kube.get<VolumeSnapshotContent>({ kind: 'VolumeSnapshotContent', name: contentName });
  const handle = content?.status?.snapshotHandle;
  if (!content || !handle)
    throw new StepFailure(
      'SnapshotNotFound',
      `The VolumeSnapshotContent ${contentName} is gone or has no snapshot handle.`,
    );

  const name = exposureName(du);
  const ns = ctx.ferryNamespace;
  const labels = resourceLabels(du);
  await createIfMissing(ctx, {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshotContent',
    metadata: { name, labels },
    spec: {
      deletionPolicy: 'Retain',
      driver: content.spec.driver,
      source: { snapshotHandle: handle },
      volumeSnapshotRef: { apiVersion: 'snapshot.storage.k8s.io/v1', kind: 'VolumeSnapshot', namespace: ns, name },
      ...(content.spec.volumeSnapshotClassName
        ? { volumeSnapshotClassName: content.spec.volumeSnapshotClassName }
        : {}),
      ...(content.spec.sourceVolumeMode ? { sourceVolumeMode: content.spec.sourceVolumeMode } : {}),
    },
  } satisfies VolumeSnapshotContent);
  await createIfMissing(ctx, {
    apiVersion: 'snapshot.storage.k8s.io/v1',
    kind: 'VolumeSnapshot',
    metadata: { name, namespace: ns, labels },
    spec: {
      source: { volumeSnapshotContentName: name },
      ...(content.spec.volumeSnapshotClassName
        ? { volumeSnapshotClassName: content.spec.volumeSnapshotClassName }
        : {}),
    },
  } satisfies VolumeSnapshot);
  const clone = await waitFor(ctx, operationTimeoutMs(du), async () => {
    const vs = await ctx.kube.get<VolumeSnapshot>({ kind: 'VolumeSnapshot', namespace: ns, name });
    return vs?.status?.readyToUse === true ? vs : undefined;
  });
  if (!clone)
    throw new StepFailure(
      'ExposeTimeout',
      `The cloned VolumeSnapshot ${ns}/${name} was not ready within ${du.spec.operationTimeout ?? '10m'}.`,
    );

  const pvc = await ctx.kube.get<PersistentVolumeClaim>({
    kind: 'PersistentVolumeClaim',
    namespace,
    name: du.spec.sourcePVC,
  });
  const storageClassName = pvc?.spec.storageClassName;
  const size = maxQuantity(clone.status?.restoreSize ?? source.status?.restoreSize, pvc ? pvcRequest(pvc) : undefined);
  if (!size)
    throw new StepFailure(
      'SizeUnknown',
      `Neither the snapshot nor the source PVC ${namespace}/${du.spec.sourcePVC} tells the volume's size.`,
    );
  const accessModes = [await backupAccessMode(ctx, storageClassName)];
  await createIfMissing(ctx, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns, labels },
    spec: {
      accessModes,
      ...(storageClassName ? { storageClassName } : {}),
      volumeMode: du.status?.volumeMode ?? 'Filesystem',
      resources: { requests: { storage: size } },
      dataSource: { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name },
    },
  } satisfies PersistentVolumeClaim);
  await boundUnlessDelayed(ctx, du, name, storageClassName);

  await transition(ctx, du, {
    to: 'Prepared',
    reason: 'Exposed',
    note: `The snapshot is exposed in ${ns} as PVC ${name} (${accessModes[0]}, ${size}).`,
    condition: { type: 'Exposed', status: 'True' },
    status: (s) => {
      s.exposure = { namespace: ns, pvc: name, volumeSnapshot: name, volumeSnapshotContent: name };
      // a block volume's next backup asks the driver for the blocks changed since this snapshot
      if (du.status?.volumeMode === 'Block')
        (s as NonNullable<DataUpload['status']>).changeTracking = {
          driver: content.spec.driver,
          snapshotHandle: handle,
        };
    },
  });
  return { outcome: 'Advanced', reason: `exposed as PVC ${ns}/${name}` };
}

/**
 * With an immediate-binding class the volume is provisioned on its own, somewhere; waiting for it here lets the
 * transfer Job be placed where the volume is (and makes a provisioning failure this step's). A class that binds
 * on first use binds when the transfer pod is scheduled, so there is nothing to wait for.
 */
async function boundUnlessDelayed(
  ctx: StepContext,
  r: FerryResource,
  name: string,
  className: string | undefined,
): Promise<void> {
  const sc = className
    ? await ctx.kube.get<StorageClass>({ kind: 'StorageClass', name: className })
    : await defaultClass(ctx);
  if (!sc || sc.volumeBindingMode === 'WaitForFirstConsumer') return;
  const bound = await waitFor(ctx, operationTimeoutMs(r), async () => {
    const pvc = await ctx.kube.get<PersistentVolumeClaim>({
      kind: 'PersistentVolumeClaim',
      namespace: ctx.ferryNamespace,
      name,
    });
    return pvc?.status?.phase === 'Bound' ? pvc : undefined;
  });
  if (!bound) {
    // the PVC goes as the resource ends (finalize), so the message says what it would have: the class and its driver
    const retry = r.kind === 'DataDownload' ? 'restore with another class (--storage-class)' : 'back up again';
    throw new StepFailure(
      'ExposeTimeout',
      `The PVC ${ctx.ferryNamespace}/${name} was not bound within ${r.spec.operationTimeout ?? '10m'}: StorageClass ${sc.metadata.name} (provisioner ${sc.provisioner}) made no volume for it. That PVC is removed as the ${r.kind === 'DataDownload' ? 'restore' : 'backup'} ends; check that the driver ${sc.provisioner} runs and can provision, then ${retry}.`,
    );
  }
}

async function defaultClass(ctx: StepContext): Promise<StorageClass | undefined> {
  const classes = await ctx.kube.list<StorageClass>('StorageClass');
  return classes.find((c) => c.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true');
}

/** ReadOnlyMany where the class says its driver supports it from snapshots, else ReadWriteOnce. */
async function backupAccessMode(ctx: StepContext, className: string | undefined): Promise<string> {
  if (!className) return 'ReadWriteOnce';
  const sc = await ctx.kube.get<StorageClass>({ kind: 'StorageClass', name: className });
  return sc?.metadata.annotations?.[backupAccessModeAnnotation] === 'ReadOnlyMany' ? 'ReadOnlyMany' : 'ReadWriteOnce';
}

/** The target PVC, waited for (within operationTimeout) when someone else makes it after the resource. */
async function targetClaim(ctx: StepContext, dd: DataDownload): Promise<PersistentVolumeClaim | undefined> {
  const key = {
    kind: 'PersistentVolumeClaim' as const,
    namespace: dd.metadata.namespace!,
    name: dd.spec.targetPVC.name,
  };
  if (!dd.spec.targetPVC.awaitClaim) return ctx.kube.get<PersistentVolumeClaim>(key);
  const since = Date.parse(dd.metadata.creationTimestamp ?? '') || ctx.startedAt.getTime();
  const target = await waitFor(ctx, operationTimeLeftMs(ctx, dd, since), () =>
    ctx.kube.get<PersistentVolumeClaim>(key),
  );
  if (!target)
    throw new StepFailure(
      'TargetPVCMissing',
      `spec.targetPVC.awaitClaim is set, but PVC ${key.namespace}/${key.name} was not created within ${dd.spec.operationTimeout ?? '10m'}.`,
    );
  return target;
}

async function exposeRestore(ctx: StepContext, dd: DataDownload): Promise<Outcome> {
  const namespace = dd.metadata.namespace!;
  const target = await targetClaim(ctx, dd);
  if (target && (target.spec.volumeName || target.status?.phase === 'Bound')) {
    throw new StepFailure(
      'TargetPVCBound',
      `The target PVC ${namespace}/${target.metadata.name} is already bound to a volume; restore into a new PVC or an unbound one.`,
    );
  }
  const source = await sourceOf(ctx, dd);
  const volumeMode = target?.spec.volumeMode ?? source.upload?.status?.volumeMode ?? 'Filesystem';
  const size =
    dd.spec.targetPVC.size ?? (target ? pvcRequest(target) : undefined) ?? (await sizeFromUpload(ctx, source.upload));
  if (!size)
    throw new StepFailure(
      'SizeUnknown',
      'spec.targetPVC.size is required: nothing else tells how large the restored volume must be.',
    );
  try {
    parseQuantity(size);
  } catch (err) {
    throw new StepFailure('InvalidSpec', `spec.targetPVC.size: ${(err as Error).message}.`);
  }
  const storageClassName = dd.spec.targetPVC.storageClassName ?? target?.spec.storageClassName;
  const accessModes = dd.spec.targetPVC.accessModes ?? target?.spec.accessModes ?? ['ReadWriteOnce'];

  const name = exposureName(dd);
  const ns = ctx.ferryNamespace;
  await createIfMissing(ctx, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: ns, labels: resourceLabels(dd) },
    spec: {
      accessModes,
      ...(storageClassName ? { storageClassName } : {}),
      volumeMode,
      resources: { requests: { storage: size } },
    },
  } satisfies PersistentVolumeClaim);
  await boundUnlessDelayed(ctx, dd, name, storageClassName);
  await transition(ctx, dd, {
    to: 'Prepared',
    reason: 'Exposed',
    note: `Restoring snapshot ${source.snapshotID.slice(0, 8)} into PVC ${name} in ${ns} (${volumeMode}, ${size}); PVC ${namespace}/${dd.spec.targetPVC.name} gets its volume once the data is complete.`,
    condition: { type: 'Exposed', status: 'True' },
    status: (s) => {
      // a full id is known only from a DataUpload; an id prefix from the spec is resolved by transfer
      if (/^[0-9a-f]{64}$/.test(source.snapshotID)) s.snapshotID = source.snapshotID;
      s.exposure = { namespace: ns, pvc: name };
    },
  });
  return { outcome: 'Advanced', reason: `restore volume PVC ${ns}/${name} requested` };
}

interface RestoreSource {
  snapshotID: string;
  upload?: DataUpload;
}

/** The snapshot to restore: given directly, or recorded by a completed DataUpload. */
async function sourceOf(ctx: StepContext, dd: DataDownload): Promise<RestoreSource> {
  const ref = dd.spec.source.dataUpload;
  if (!ref) {
    if (!dd.spec.source.snapshotID)
      throw new StepFailure('InvalidSpec', 'spec.source names neither a snapshotID nor a dataUpload.');
    return { snapshotID: dd.spec.source.snapshotID };
  }
  const namespace = ref.namespace ?? dd.metadata.namespace!;
  const upload = await ctx.kube.get<DataUpload & KubeObject>({ kind: 'DataUpload', namespace, name: ref.name });
  if (!upload)
    throw new StepFailure('SourceNotFound', `The DataUpload ${namespace}/${ref.name} to restore from does not exist.`);
  const id = upload.status?.snapshotID;
  if (upload.status?.phase !== 'Completed' || !id) {
    throw new StepFailure(
      'SourceNotCompleted',
      `The DataUpload ${namespace}/${ref.name} has no completed backup to restore (phase ${upload.status?.phase ?? 'New'}).`,
    );
  }
  if (dd.spec.source.snapshotID && !id.startsWith(dd.spec.source.snapshotID)) {
    throw new StepFailure(
      'InvalidSpec',
      `spec.source.snapshotID ${dd.spec.source.snapshotID} is not the snapshot of DataUpload ${namespace}/${ref.name} (${id.slice(0, 8)}).`,
    );
  }
  return { snapshotID: id, upload };
}

/** The backed-up PVC's requested size if it still exists, else room for the bytes the backup saw. */
async function sizeFromUpload(ctx: StepContext, du: DataUpload | undefined): Promise<string | undefined> {
  if (!du) return undefined;
  const pvc = await ctx.kube.get<PersistentVolumeClaim>({
    kind: 'PersistentVolumeClaim',
    namespace: du.metadata.namespace,
    name: du.spec.sourcePVC,
  });
  const request = pvc ? pvcRequest(pvc) : undefined;
  if (request) return request;
  const bytes = du.status?.stats?.bytes ?? du.status?.progress?.totalBytes;
  if (!bytes) return undefined;
  const mi = 2 ** 20;
  // a block device needs exactly its size; a filesystem needs room for metadata on top of the file data
  return du.status?.volumeMode === 'Block'
    ? formatQuantity(Math.ceil(bytes / mi) * mi)
    : formatQuantity(Math.ceil((bytes * 1.25 + 64 * mi) / mi) * mi);
}

export const exposeStep = dataStep('expose', expose);
