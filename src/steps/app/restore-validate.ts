// What an AppRestore is checked against before any DataDownload is made, read from the cluster as it is now: the
// AppBackup (in this namespace or, across namespaces, where its location's crossNamespaceRestores allows), its
// phase, the volumes asked for (held by the backup and Completed there, their DataUploads still Completed), the
// target PVC names (valid, distinct, not a claim already bound), and the deterministic DataDownload names (not
// taken by an object this AppRestore does not own). The first problem is returned as a sentence naming the field.
import type { AppBackup, AppBackupVolume } from '../../shared/api/app.ts';
import { objectName } from '../../shared/api/fields/common.ts';
import type { BackupStorageLocation, DataDownload, DataUpload } from '../../shared/api/types.ts';
import { volumeObjectName } from '../../shared/app/names.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { restoreAllowed } from '../../shared/location/namespaces.ts';
import type { Restore, RestoreContext } from './restore-context.ts';
import { ownedBy } from './restore-downloads.ts';

export interface PlannedVolume {
  pvc: string;
  targetPVC: string;
  dataDownload: string;
  /** the AppBackup's DataUpload of this volume, in the AppBackup's namespace */
  dataUpload: string;
}

export interface RestorePlan {
  backupNamespace: string;
  location: string;
  volumes: PlannedVolume[];
}

type Backup = AppBackup & KubeObject;

const pvcName = objectName('a PersistentVolumeClaim name');
const pvcPattern = new RegExp(pvcName.pattern!.regex);

/** Why `name` cannot name a PVC, or undefined when it can. */
function badPVCName(name: unknown): string | undefined {
  if (typeof name !== 'string' || name === '') return 'is empty';
  if (name.length > (pvcName.maxLength ?? 253)) return `is ${name.length} characters long, at most 253 are allowed`;
  if (!pvcPattern.test(name)) return `"${name}" is not ${pvcName.pattern!.allowed}`;
  return undefined;
}

export function backupNamespaceOf(r: Restore): string {
  return r.spec.appBackup.namespace ?? r.metadata.namespace ?? '';
}

export function readBackup(ctx: RestoreContext, r: Restore): Promise<Backup | undefined> {
  return ctx.kube.get<Backup>({ kind: 'AppBackup', namespace: backupNamespaceOf(r), name: r.spec.appBackup.name });
}

/** May this restore read the AppBackup's repository? Checked before anything of the AppBackup is looked at further. */
async function locationRefusal(ctx: RestoreContext, r: Restore, backup: Backup): Promise<string | undefined> {
  const name = backup.spec.backupStorageLocation;
  const from = backupNamespaceOf(r);
  const to = r.metadata.namespace ?? '';
  const bsl = await ctx.kube.get<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ctx.ferryNamespace,
    name,
  });
  if (!bsl) return `BackupStorageLocation "${name}" of AppBackup ${from}/${backup.metadata.name} does not exist`;
  if (restoreAllowed(bsl.spec, from, to)) return undefined;
  return from === to
    ? `BackupStorageLocation "${name}" does not serve namespace ${to} (see its spec.allowedNamespaces)`
    : `spec.appBackup.namespace: BackupStorageLocation "${name}" does not allow restores from namespace ${from} into namespace ${to} (see its spec.crossNamespaceRestores)`;
}

/** The volumes to restore: spec.volumes (each held and Completed), else every Completed volume of the backup. */
function chosenVolumes(r: Restore, backup: Backup): AppBackupVolume[] | string {
  const held = backup.status?.volumes ?? [];
  const label = `AppBackup ${backup.metadata.namespace}/${backup.metadata.name}`;
  if (r.spec.volumes === undefined) {
    const done = held.filter((v) => v.phase === 'Completed');
    return done.length > 0 ? done : `${label} holds no Completed volume`;
  }
  if (r.spec.volumes.length === 0) return 'spec.volumes: is empty; leave it out to restore every Completed volume';
  const out: AppBackupVolume[] = [];
  for (const [i, pvc] of r.spec.volumes.entries()) {
    const v = held.find((h) => h.pvc === pvc);
    const field = `spec.volumes[${i}]`;
    if (!v)
      return `${field}: ${label} holds no volume "${pvc}"; it holds ${held.map((h) => h.pvc).join(', ') || 'none'}`;
    if (v.phase !== 'Completed') return `${field}: volume "${pvc}" of ${label} is ${v.phase ?? 'New'}, not Completed`;
    if (out.includes(v)) return `${field}: volume "${pvc}" is listed twice`;
    out.push(v);
  }
  return out;
}

/** spec.pvcNames: keys among the restored volumes, values valid and distinct names of claims not already bound. */
async function targetRefusal(ctx: RestoreContext, r: Restore, volumes: PlannedVolume[]): Promise<string | undefined> {
  const names = r.spec.pvcNames ?? {};
  for (const key of Object.keys(names))
    if (!volumes.some((v) => v.pvc === key))
      return `spec.pvcNames.${key}: "${key}" is not a volume this restore brings back (${volumes.map((v) => v.pvc).join(', ')})`;
  const seen = new Map<string, string>();
  for (const v of volumes) {
    const field = Object.hasOwn(names, v.pvc) ? `spec.pvcNames.${v.pvc}` : `volume "${v.pvc}"`;
    const bad = badPVCName(v.targetPVC);
    if (bad) return `${field}: the target PVC name ${bad}`;
    const other = seen.get(v.targetPVC);
    if (other !== undefined)
      return `${field}: volumes "${other}" and "${v.pvc}" would both restore into PVC ${v.targetPVC}`;
    seen.set(v.targetPVC, v.pvc);
    const claim = await ctx.kube.get<KubeObject>({
      kind: 'PersistentVolumeClaim',
      namespace: r.metadata.namespace,
      name: v.targetPVC,
    });
    const claimSpec = claim?.spec as { volumeName?: string } | undefined;
    const bound = (claim?.status as { phase?: string } | undefined)?.phase === 'Bound' || !!claimSpec?.volumeName;
    if (bound)
      return `${field}: PersistentVolumeClaim ${r.metadata.namespace}/${v.targetPVC} already exists and is bound to a volume; restore into a new or unbound PVC (spec.pvcNames)`;
  }
  return undefined;
}

async function sourceRefusal(ctx: RestoreContext, namespace: string, v: PlannedVolume): Promise<string | undefined> {
  const du = await ctx.kube.get<DataUpload & KubeObject>({ kind: 'DataUpload', namespace, name: v.dataUpload });
  if (!du) return `volume "${v.pvc}": its DataUpload ${namespace}/${v.dataUpload} no longer exists`;
  if (du.status?.phase !== 'Completed')
    return `volume "${v.pvc}": its DataUpload ${namespace}/${v.dataUpload} is ${du.status?.phase ?? 'New'}, not Completed`;
  return undefined;
}

async function squatterOf(ctx: RestoreContext, r: Restore, v: PlannedVolume): Promise<string | undefined> {
  const dd = await ctx.kube.get<DataDownload & KubeObject>({
    kind: 'DataDownload',
    namespace: r.metadata.namespace,
    name: v.dataDownload,
  });
  if (!dd || ownedBy(dd, r)) return undefined;
  return `volume "${v.pvc}": DataDownload ${r.metadata.namespace}/${v.dataDownload} already exists and does not belong to this AppRestore; delete it or rename the AppRestore`;
}

/**
 * A restore from another namespace no location allows is refused before the AppBackup is read, with the same words
 * whether it exists or not: the step reads every namespace, the user asking may not.
 */
async function crossNamespaceRefusal(ctx: RestoreContext, from: string, to: string): Promise<string | undefined> {
  if (from === to) return undefined;
  const locations = await ctx.kube.list<BackupStorageLocation & KubeObject>('BackupStorageLocation', {
    namespace: ctx.ferryNamespace,
  });
  if (locations.some((l) => restoreAllowed(l.spec, from, to))) return undefined;
  return `spec.appBackup.namespace: no BackupStorageLocation allows restores from namespace ${from} into namespace ${to} (see their spec.crossNamespaceRestores)`;
}

/** The plan of the restore, or why it cannot run. */
export async function planRestore(ctx: RestoreContext, r: Restore): Promise<RestorePlan | { failure: string }> {
  const from = backupNamespaceOf(r);
  const unreachable = await crossNamespaceRefusal(ctx, from, r.metadata.namespace ?? '');
  if (unreachable) return { failure: unreachable };
  const backup = await readBackup(ctx, r);
  if (!backup) return { failure: `spec.appBackup: AppBackup ${from}/${r.spec.appBackup.name} does not exist` };
  const refused = await locationRefusal(ctx, r, backup);
  if (refused) return { failure: refused };
  const phase = backup.status?.phase ?? 'New';
  if (phase !== 'Completed' && phase !== 'PartiallyFailed')
    return {
      failure: `spec.appBackup: AppBackup ${from}/${backup.metadata.name} is ${phase}; only a Completed or PartiallyFailed one can be restored`,
    };
  const chosen = chosenVolumes(r, backup);
  if (typeof chosen === 'string') return { failure: chosen };
  const volumes: PlannedVolume[] = [];
  for (const v of chosen) {
    if (!v.dataUpload) return { failure: `volume "${v.pvc}": the AppBackup names no DataUpload for it` };
    volumes.push({
      pvc: v.pvc,
      // own keys only: a volume named "constructor" must not find Object.prototype's
      targetPVC: r.spec.pvcNames && Object.hasOwn(r.spec.pvcNames, v.pvc) ? r.spec.pvcNames[v.pvc] : v.pvc,
      dataDownload: volumeObjectName(r.metadata.name, v.pvc),
      dataUpload: v.dataUpload,
    });
  }
  const checks = [
    () => targetRefusal(ctx, r, volumes),
    ...volumes.map((v) => () => sourceRefusal(ctx, from, v)),
    ...volumes.map((v) => () => squatterOf(ctx, r, v)),
  ];
  for (const check of checks) {
    const failure = await check();
    if (failure) return { failure };
  }
  return { backupNamespace: from, location: backup.spec.backupStorageLocation, volumes };
}
