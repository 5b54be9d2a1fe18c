// How the volumes of an AppBackup are snapshotted: one VolumeGroupSnapshot when every volume's CSI driver is the
// same and has a VolumeGroupSnapshotClass (the spec's, else the driver's default), otherwise one VolumeSnapshot per
// volume with the spec's VolumeSnapshotClass or the driver's default. The per-volume answer says why there is no
// group snapshot, for the GroupSnapshot condition.
import { isNotFound } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { PersistentVolumeClaim } from '../../shared/kube/objects.ts';
import type { AppBackupContext, AppBackupObject } from './context.ts';

interface SnapshotClass extends KubeObject {
  driver: string;
}

interface CSIVolume extends KubeObject {
  spec: { csi?: { driver?: string } };
}

const groupDefaultAnnotation = 'groupsnapshot.storage.kubernetes.io/is-default-class';
const volumeDefaultAnnotation = 'snapshot.storage.kubernetes.io/is-default-class';

export type SnapshotPlan =
  | { kind: 'Group'; groupClass: string }
  | { kind: 'PerVolume'; why: string; classes: Record<string, string | undefined> };

/** The CSI driver of each PVC's volume; undefined for a volume that is not CSI. */
async function driversOf(ctx: AppBackupContext, namespace: string, pvcs: string[]): Promise<Map<string, string>> {
  const drivers = new Map<string, string>();
  for (const pvc of pvcs) {
    const claim = await ctx.kube.get<PersistentVolumeClaim>({ kind: 'PersistentVolumeClaim', namespace, name: pvc });
    const volume = claim?.spec.volumeName;
    const pv = volume ? await ctx.kube.get<CSIVolume>({ kind: 'PersistentVolume', name: volume }) : undefined;
    const driver = pv?.spec.csi?.driver;
    if (driver) drivers.set(pvc, driver);
  }
  return drivers;
}

/** The classes of a kind; a cluster without the kind's API (no group snapshot CRDs) has none. */
async function classesOf(ctx: AppBackupContext, kind: 'VolumeGroupSnapshotClass' | 'VolumeSnapshotClass') {
  try {
    return await ctx.kube.list<SnapshotClass>(kind);
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

function defaultFor(classes: SnapshotClass[], driver: string, annotation: string): string | undefined {
  return classes.find((c) => c.driver === driver && c.metadata.annotations?.[annotation] === 'true')?.metadata.name;
}

/** Why the volumes cannot share one group snapshot, or the group class they use. */
async function groupClass(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  pvcs: string[],
  drivers: Map<string, string>,
): Promise<{ groupClass: string } | { why: string }> {
  const notCSI = pvcs.filter((p) => !drivers.has(p));
  if (notCSI.length) return { why: `the volumes of ${notCSI.join(', ')} are not CSI volumes` };
  const distinct = [...new Set(drivers.values())].sort();
  if (distinct.length > 1) return { why: `the volumes use several CSI drivers (${distinct.join(', ')})` };
  const driver = distinct[0];
  const classes = await classesOf(ctx, 'VolumeGroupSnapshotClass');
  const named = ab.spec.volumeGroupSnapshotClassName;
  if (named) {
    const c = classes.find((x) => x.metadata.name === named);
    if (!c) return { why: `VolumeGroupSnapshotClass ${named} does not exist` };
    if (c.driver !== driver)
      return { why: `VolumeGroupSnapshotClass ${named} is for driver ${c.driver}, the volumes use ${driver}` };
    return { groupClass: named };
  }
  const found = defaultFor(classes, driver, groupDefaultAnnotation);
  return found
    ? { groupClass: found }
    : { why: `CSI driver ${driver} has no default VolumeGroupSnapshotClass (annotated ${groupDefaultAnnotation})` };
}

export async function planSnapshots(ctx: AppBackupContext, ab: AppBackupObject, pvcs: string[]): Promise<SnapshotPlan> {
  const drivers = await driversOf(ctx, ab.metadata.namespace!, pvcs);
  const group = await groupClass(ctx, ab, pvcs, drivers);
  if ('groupClass' in group) return { kind: 'Group', groupClass: group.groupClass };
  const named = ab.spec.volumeSnapshotClassName;
  const classes = named ? [] : await classesOf(ctx, 'VolumeSnapshotClass');
  const chosen: Record<string, string | undefined> = {};
  for (const pvc of pvcs) {
    const driver = drivers.get(pvc);
    // no class found: the snapshot controller picks the driver's default itself, or says why it cannot
    chosen[pvc] = named ?? (driver ? defaultFor(classes, driver, volumeDefaultAnnotation) : undefined);
  }
  return { kind: 'PerVolume', why: group.why, classes: chosen };
}
