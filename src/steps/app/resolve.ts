// Which PVCs an AppBackup covers, and whether it can run at all: the named PVCs and those its selector picks, in
// its own namespace only (the list is namespaced, so a selector never reaches another tenant's claims), each
// present and Bound, the storage location there and open to the namespace, the named snapshot classes there and
// operationTimeout readable. The answer names what is wrong, for status.message of a FailedValidation.
import type { BackupStorageLocation } from '../../shared/api/types.ts';
import { parseDuration } from '../../shared/api/duration.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { PersistentVolumeClaim } from '../../shared/kube/objects.ts';
import { backupAllowed } from '../../shared/location/namespaces.ts';
import { matchesSelector, selectsSomething } from '../../shared/schedule/selector.ts';
import type { AppBackupContext, AppBackupObject } from './context.ts';

export const defaultOperationTimeoutMs = 10 * 60_000;

/** spec.operationTimeout in ms; throws naming the field when it is not a duration. */
export function operationTimeoutMs(ab: AppBackupObject): number {
  try {
    return parseDuration(ab.spec.operationTimeout) ?? defaultOperationTimeoutMs;
  } catch (err) {
    throw new Error(`spec.operationTimeout: ${(err as Error).message}`);
  }
}

/** The PVC names, sorted, or the reasons the AppBackup cannot run. */
export async function resolveVolumes(
  ctx: AppBackupContext,
  ab: AppBackupObject,
): Promise<{ pvcs: string[] } | { problems: string[] }> {
  const namespace = ab.metadata.namespace!;
  const problems: string[] = [];
  const claims = (await ctx.kube.list<PersistentVolumeClaim>('PersistentVolumeClaim', { namespace })).filter(
    (c) => c.metadata.namespace === namespace && !c.metadata.deletionTimestamp,
  );
  const byName = new Map(claims.map((c) => [c.metadata.name, c]));
  const wanted = new Set(ab.spec.pvcs ?? []);
  const selector = ab.spec.selector;
  if (selectsSomething(selector))
    for (const c of claims) if (matchesSelector(selector, c.metadata.labels)) wanted.add(c.metadata.name);
  const pvcs = [...wanted].sort();
  if (pvcs.length === 0)
    problems.push(`no PersistentVolumeClaim of namespace ${namespace} is named in spec.pvcs or matches spec.selector`);
  for (const pvc of pvcs) {
    const c = byName.get(pvc);
    if (!c) problems.push(`spec.pvcs: PersistentVolumeClaim ${pvc} does not exist in namespace ${namespace}`);
    else if (c.status?.phase !== 'Bound')
      problems.push(`PersistentVolumeClaim ${pvc} is ${c.status?.phase ?? 'Pending'}, not Bound`);
  }
  problems.push(...(await locationProblems(ctx, ab)), ...(await classProblems(ctx, ab)));
  try {
    operationTimeoutMs(ab);
  } catch (err) {
    problems.push((err as Error).message);
  }
  return problems.length ? { problems } : { pvcs };
}

async function locationProblems(ctx: AppBackupContext, ab: AppBackupObject): Promise<string[]> {
  const name = ab.spec.backupStorageLocation;
  const loc = await ctx.kube.get<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ctx.ferryNamespace,
    name,
  });
  if (!loc)
    return [
      `spec.backupStorageLocation: BackupStorageLocation ${name} does not exist in namespace ${ctx.ferryNamespace}`,
    ];
  if (!backupAllowed(loc.spec, ab.metadata.namespace!))
    return [
      `spec.backupStorageLocation: BackupStorageLocation ${name} does not allow namespace ${ab.metadata.namespace} (allowedNamespaces: ${(loc.spec.allowedNamespaces ?? []).join(', ')})`,
    ];
  return [];
}

async function classProblems(ctx: AppBackupContext, ab: AppBackupObject): Promise<string[]> {
  const problems: string[] = [];
  const group = ab.spec.volumeGroupSnapshotClassName;
  if (group && !(await ctx.kube.get({ kind: 'VolumeGroupSnapshotClass', name: group })))
    problems.push(`spec.volumeGroupSnapshotClassName: VolumeGroupSnapshotClass ${group} does not exist`);
  const single = ab.spec.volumeSnapshotClassName;
  if (single && !(await ctx.kube.get({ kind: 'VolumeSnapshotClass', name: single })))
    problems.push(`spec.volumeSnapshotClassName: VolumeSnapshotClass ${single} does not exist`);
  return problems;
}
