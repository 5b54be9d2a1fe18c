// Taking the snapshots of an AppBackup between its hooks. Group: each claim gets the AppBackup's own member label,
// one VolumeGroupSnapshot selects them, and once it is ready its member VolumeSnapshots (owned by that very group,
// by uid) are mapped to the claims; the labels come off whatever happens. PerVolume: one VolumeSnapshot per claim,
// created back to back, each waited for until it is cut (status.creationTime). `onCut` runs as soon as every cut is
// known (the group's creationTime comes before its readyToUse), to end a file system freeze no later than needed.
// Names are deterministic, so a rerun finds what an earlier run made; an object of that name not owned by this
// AppBackup is refused, never adopted.
import type { AppBackupVolume } from '../../shared/api/app.ts';
import { appLabels, groupMemberLabel, groupSnapshotName, volumeSnapshotName } from '../../shared/app/names.ts';
import { isAlreadyExists, isNotFound } from '../../shared/kube/errors.ts';
import type { KubeObject, ObjectKey } from '../../shared/kube/kube.ts';
import { labelValue } from '../../shared/kube/names.ts';
import { apiVersionOf } from '../../shared/kube/resources.ts';
import type { AppBackupContext, AppBackupObject } from './context.ts';
import { operationTimeoutMs } from './resolve.ts';
import type { SnapshotPlan } from './classes.ts';
import { notOwned, ownedBy, ownerOf } from './owner.ts';

interface Snapshot extends KubeObject {
  spec: {
    source: { persistentVolumeClaimName?: string; selector?: unknown };
    volumeSnapshotClassName?: string;
    volumeGroupSnapshotClassName?: string;
  };
  status?: { readyToUse?: boolean; creationTime?: string; error?: { message?: string } };
}

export interface TakenSnapshots {
  /** member or per-volume VolumeSnapshot of each PVC */
  snapshots: Record<string, string>;
  snapshotTime: string;
}

/** The snapshots could not be taken; the message says which and why. */
export class SnapshotFailure extends Error {}

function labelsOf(ab: AppBackupObject): Record<string, string> {
  return { [appLabels.appBackup]: labelValue(ab.metadata.name) };
}

/**
 * Creates `obj` unless this AppBackup made it already (someone else's object of that name fails the backup), and
 * says since when it exists: no cut can be earlier.
 */
async function ensure(ctx: AppBackupContext, ab: AppBackupObject, obj: Snapshot): Promise<number> {
  const asked = ctx.now().getTime();
  try {
    await ctx.kube.create(obj);
    return asked;
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
    const found = await ctx.kube.get<Snapshot>(keyOf(obj));
    if (found && !ownedBy(found, { kind: 'AppBackup', uid: ab.metadata.uid }))
      throw new SnapshotFailure(notOwned(found, ab));
    return Date.parse(found?.metadata.creationTimestamp ?? '') || asked;
  }
}

/**
 * When the snapshot was cut, as the snapshot controller reports it, but never before it was asked for: the
 * controller's time has whole seconds, and the pre hooks ended within the second before the request.
 */
function cutTime(reported: string | undefined, notBefore: number): number {
  return Math.max(Date.parse(reported ?? '') || notBefore, notBefore);
}

function keyOf(obj: Snapshot): ObjectKey {
  return { kind: obj.kind as 'VolumeSnapshot', namespace: obj.metadata.namespace, name: obj.metadata.name };
}

/** Polls `check` until it answers, the deadline passes (undefined) or `signal` aborts (throws). */
async function until<T>(
  ctx: AppBackupContext,
  signal: AbortSignal,
  deadline: number,
  check: () => Promise<T | undefined>,
): Promise<T | undefined> {
  for (;;) {
    signal.throwIfAborted();
    const value = await check();
    if (value !== undefined) return value;
    if (ctx.now().getTime() >= deadline) return undefined;
    await ctx.sleep(ctx.pollMs, signal);
  }
}

async function setClaimLabel(ctx: AppBackupContext, ab: AppBackupObject, pvc: string, on: boolean): Promise<void> {
  const key: ObjectKey = { kind: 'PersistentVolumeClaim', namespace: ab.metadata.namespace, name: pvc };
  try {
    await ctx.kube.patch(key, { metadata: { labels: { [groupMemberLabel(ab.metadata.uid!)]: on ? 'true' : null } } });
  } catch (err) {
    if (on || !isNotFound(err)) throw err;
  }
}

/** Takes the claims out of any group snapshot selection of this AppBackup. */
export async function removeClaimLabels(ctx: AppBackupContext, ab: AppBackupObject, pvcs: string[]): Promise<void> {
  for (const pvc of pvcs) await setClaimLabel(ctx, ab, pvc, false);
}

async function takeGroup(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  pvcs: string[],
  groupClass: string,
  signal: AbortSignal,
  deadline: number,
  onCut: () => Promise<void>,
): Promise<TakenSnapshots> {
  const namespace = ab.metadata.namespace!;
  const name = groupSnapshotName(ab.metadata.uid!);
  try {
    for (const pvc of pvcs) await setClaimLabel(ctx, ab, pvc, true);
    const since = await ensure(ctx, ab, {
      apiVersion: apiVersionOf('VolumeGroupSnapshot'),
      kind: 'VolumeGroupSnapshot',
      metadata: { name, namespace, labels: labelsOf(ab), ownerReferences: [ownerOf(ab)] },
      spec: {
        source: { selector: { matchLabels: { [groupMemberLabel(ab.metadata.uid!)]: 'true' } } },
        volumeGroupSnapshotClassName: groupClass,
      },
    });
    let last: Snapshot | undefined;
    const ready = await until(ctx, signal, deadline, async () => {
      last = await ctx.kube.get<Snapshot>({ kind: 'VolumeGroupSnapshot', namespace, name });
      if (!last) throw new SnapshotFailure(`VolumeGroupSnapshot ${namespace}/${name} was deleted while ferry waited`);
      // cut once it has a creationTime (or is ready): what the freeze waited for, long before the upload is ready
      if (last.status?.creationTime || last.status?.readyToUse) await onCut();
      return last.status?.readyToUse === true ? last : undefined;
    });
    if (!ready)
      throw new SnapshotFailure(
        `VolumeGroupSnapshot ${namespace}/${name} was not ready within ${ab.spec.operationTimeout ?? '10m'}${last?.status?.error?.message ? `: ${last.status.error.message}` : ''}`,
      );
    const members = (await ctx.kube.list<Snapshot>('VolumeSnapshot', { namespace })).filter((vs) =>
      ownedBy(vs, { kind: 'VolumeGroupSnapshot', uid: ready.metadata.uid }),
    );
    const snapshots: Record<string, string> = {};
    for (const vs of members) {
      const pvc = vs.spec.source.persistentVolumeClaimName;
      if (pvc && pvcs.includes(pvc)) snapshots[pvc] = vs.metadata.name;
    }
    const missing = pvcs.filter((p) => !snapshots[p]);
    if (missing.length)
      throw new SnapshotFailure(`VolumeGroupSnapshot ${namespace}/${name} has no member for ${missing.join(', ')}`);
    return { snapshots, snapshotTime: new Date(cutTime(ready.status?.creationTime, since)).toISOString() };
  } finally {
    await removeClaimLabels(ctx, ab, pvcs);
  }
}

async function takeEach(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  pvcs: string[],
  classes: Record<string, string | undefined>,
  signal: AbortSignal,
  deadline: number,
  onCut: () => Promise<void>,
): Promise<TakenSnapshots> {
  const namespace = ab.metadata.namespace!;
  const snapshots: Record<string, string> = {};
  const since: Record<string, number> = {};
  // back to back first, then the waits: the cuts stay as close together as per-volume snapshots allow
  for (const pvc of pvcs) {
    snapshots[pvc] = volumeSnapshotName(ab.metadata.uid!, pvc);
    since[pvc] = await ensure(ctx, ab, {
      apiVersion: apiVersionOf('VolumeSnapshot'),
      kind: 'VolumeSnapshot',
      metadata: { name: snapshots[pvc], namespace, labels: labelsOf(ab), ownerReferences: [ownerOf(ab)] },
      spec: {
        source: { persistentVolumeClaimName: pvc },
        ...(classes[pvc] ? { volumeSnapshotClassName: classes[pvc] } : {}),
      },
    });
  }
  let latest = 0;
  for (const pvc of pvcs) {
    let last: Snapshot | undefined;
    const cut = await until(ctx, signal, deadline, async () => {
      last = await ctx.kube.get<Snapshot>({ kind: 'VolumeSnapshot', namespace, name: snapshots[pvc] });
      if (!last)
        throw new SnapshotFailure(`VolumeSnapshot ${namespace}/${snapshots[pvc]} was deleted while ferry waited`);
      return last.status?.creationTime;
    });
    if (!cut)
      throw new SnapshotFailure(
        `VolumeSnapshot ${namespace}/${snapshots[pvc]} of PVC ${pvc} was not cut within ${ab.spec.operationTimeout ?? '10m'}${last?.status?.error?.message ? `: ${last.status.error.message}` : ''}`,
      );
    latest = Math.max(latest, cutTime(cut, since[pvc]));
  }
  await onCut();
  return { snapshots, snapshotTime: new Date(latest).toISOString() };
}

export function takeSnapshots(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  pvcs: string[],
  plan: SnapshotPlan,
  signal: AbortSignal,
  timeoutMs: number,
  onCut: () => Promise<void>,
): Promise<TakenSnapshots> {
  const deadline = ctx.now().getTime() + timeoutMs;
  return plan.kind === 'Group'
    ? takeGroup(ctx, ab, pvcs, plan.groupClass, signal, deadline, onCut)
    : takeEach(ctx, ab, pvcs, plan.classes, signal, deadline, onCut);
}

/**
 * Deletes a snapshot this AppBackup made and waits (within operationTimeout) until the snapshot controller has
 * removed it with its content, so an AppBackup shown ended has nothing left in the namespace.
 */
async function deleteOwn(ctx: AppBackupContext, ab: AppBackupObject, key: ObjectKey): Promise<void> {
  const found = await ctx.kube.get(key);
  if (!found || !ownedBy(found, { kind: 'AppBackup', uid: ab.metadata.uid })) return;
  await ctx.kube.delete(key, { uid: found.metadata.uid });
  const gone = await until(ctx, ctx.signal, ctx.now().getTime() + operationTimeoutMs(ab), async () =>
    (await ctx.kube.get(key)) ? undefined : true,
  );
  if (!gone)
    ctx.log.warn('a deleted snapshot is still there; the garbage collector removes it with the AppBackup', { ...key });
}

/**
 * Removes what the snapshot stage made and no DataUpload took over: the claim labels, the group snapshot (its
 * members go with it), and the per-volume snapshots of volumes without a DataUpload.
 */
export async function releaseSnapshots(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  volumes: AppBackupVolume[],
): Promise<void> {
  const namespace = ab.metadata.namespace!;
  const uid = ab.metadata.uid!;
  await removeClaimLabels(
    ctx,
    ab,
    volumes.map((v) => v.pvc),
  );
  await deleteOwn(ctx, ab, { kind: 'VolumeGroupSnapshot', namespace, name: groupSnapshotName(uid) });
  for (const v of volumes)
    if (!v.dataUpload)
      await deleteOwn(ctx, ab, { kind: 'VolumeSnapshot', namespace, name: volumeSnapshotName(uid, v.pvc) });
}
