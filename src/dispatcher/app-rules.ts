// AppBackup and AppRestore at admission: valid fields (./rules.ts, from the same descriptions as the CRDs), then what
// the fields cannot say: PVCs named or selected, hooks that pick pods and have time to run, durations above zero,
// restore targets that do not collide; then the cluster: the location exists and lets the namespace in, and a
// restore from another namespace is one the location allows. After creation the spec is fixed but for cancel, and a
// final phase stays final. Whatever a PVC or an AppBackup's phase turns out to be when the step looks is the step's
// to judge (FailedValidation), so a schedule's run is never refused for a PVC that comes later.
import { parseDuration } from '../shared/api/duration.ts';
import type { AppBackup, AppBackupHooks, AppKind, AppRestore, Hook } from '../shared/api/app.ts';
import { freezeHook } from '../shared/app/names.ts';
import type { BackupStorageLocation } from '../shared/api/types.ts';
import { appTerminalPhases } from '../shared/app/phases.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import { backupAllowed, restoreAllowed } from '../shared/location/namespaces.ts';
import { expressionProblems, selectsSomething } from '../shared/schedule/selector.ts';
import { forbidden, invalid } from './admission.ts';
import type { Denial } from './admission.ts';
import { checkSpecUpdate, checkStatusUpdate, fieldDenial, isDenial } from './rules.ts';

type Backup = AppBackup & KubeObject;
type Restore = AppRestore & KubeObject;

const appKinds: readonly string[] = ['AppBackup', 'AppRestore'] satisfies AppKind[];

export function isAppKind(kind: string): kind is AppKind {
  return appKinds.includes(kind);
}

const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A duration field that must leave time to do something (the field's pattern has made sure it parses). */
export function positive(value: string | undefined, path: string): string[] {
  return value !== undefined && parseDuration(value) === 0 ? [`${path}: must be longer than 0, e.g. 30s or 10m`] : [];
}

function hookProblems(hook: Hook, path: string): string[] {
  const problems: string[] = [];
  if (hook.name === freezeHook)
    problems.push(`${path}.name: "${freezeHook}" names the runs of spec.freeze in status.hooks; choose another name`);
  if (!selectsSomething(hook.selector))
    problems.push(
      `${path}.selector: must pick pods by matchLabels or matchExpressions (an empty selector would run the hook in every pod of the namespace)`,
    );
  problems.push(...expressionProblems(hook.selector, `${path}.selector`));
  problems.push(...positive(hook.timeout, `${path}.timeout`));
  return problems;
}

/** The problems of pre and post hooks, each naming its entry under `path` (e.g. spec.hooks). */
export function hooksProblems(hooks: AppBackupHooks | undefined, path: string): string[] {
  return (['pre', 'post'] as const).flatMap((stage) =>
    (hooks?.[stage] ?? []).flatMap((hook, i) => hookProblems(hook, `${path}.${stage}[${i}]`)),
  );
}

function backupProblems(spec: AppBackup['spec']): string[] {
  const problems: string[] = [];
  if (!spec.pvcs?.length && !selectsSomething(spec.selector))
    problems.push('spec: name PVCs in spec.pvcs or select them with spec.selector (or both)');
  problems.push(...expressionProblems(spec.selector, 'spec.selector'));
  problems.push(...hooksProblems(spec.hooks, 'spec.hooks'));
  problems.push(...positive(spec.operationTimeout, 'spec.operationTimeout'));
  problems.push(...positive(spec.expire, 'spec.expire'));
  return problems;
}

function restoreProblems(spec: AppRestore['spec']): string[] {
  const problems: string[] = [];
  for (const source of Object.keys(spec.pvcNames ?? {})) {
    const path = `spec.pvcNames[${JSON.stringify(source)}]`;
    if (source.length > 253 || !dnsSubdomain.test(source))
      problems.push(`${path}: the key must be the name of a PVC in the backup (a DNS-1123 subdomain)`);
    else if (spec.volumes && !spec.volumes.includes(source))
      problems.push(`${path}: ${source} is not in spec.volumes, so nothing would be restored under this name`);
  }
  problems.push(...positive(spec.operationTimeout, 'spec.operationTimeout'));
  return problems;
}

/** Two restored volumes written into one PVC: the pair, by target name. */
function targetCollision(spec: AppRestore['spec'], volumes: readonly string[]): string | undefined {
  const by = new Map<string, string>();
  for (const pvc of volumes) {
    const target = spec.pvcNames?.[pvc] ?? pvc;
    const other = by.get(target);
    if (other !== undefined)
      return `spec.pvcNames: volumes ${other} and ${pvc} would both be restored into PVC ${target}; give each its own name`;
    by.set(target, pvc);
  }
  return undefined;
}

async function existingLocation(
  kube: Kube,
  ferryNamespace: string,
  name: string,
): Promise<(BackupStorageLocation & KubeObject) | Denial> {
  const found = await kube.get<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ferryNamespace,
    name,
  });
  return (
    found ??
    invalid(`spec.backupStorageLocation: BackupStorageLocation "${name}" does not exist in namespace ${ferryNamespace}`)
  );
}

async function checkBackupReferences(kube: Kube, ferryNamespace: string, ab: Backup): Promise<Denial | undefined> {
  const namespace = ab.metadata.namespace ?? '';
  const name = ab.spec.backupStorageLocation;
  const loc = await existingLocation(kube, ferryNamespace, name);
  if (isDenial(loc)) return loc;
  if (!backupAllowed(loc.spec, namespace))
    return forbidden(
      `spec.backupStorageLocation: BackupStorageLocation "${name}" does not allow namespace ${namespace} (allowedNamespaces: ${(loc.spec.allowedNamespaces ?? []).join(', ')})`,
    );
  return undefined;
}

/** The same words whether the AppBackup is missing or off limits, so a namespace learns nothing of another's. */
function crossNamespaceDenial(ar: Restore, from: string): Denial {
  return forbidden(
    `spec.appBackup.namespace: namespace ${ar.metadata.namespace} may not restore AppBackup "${ar.spec.appBackup.name}" of namespace ${from}: there is no such AppBackup, or its BackupStorageLocation does not allow restores from ${from} into ${ar.metadata.namespace} (see the location's spec.crossNamespaceRestores)`,
  );
}

async function checkRestoreReferences(kube: Kube, ferryNamespace: string, ar: Restore): Promise<Denial | undefined> {
  const namespace = ar.metadata.namespace ?? '';
  const from = ar.spec.appBackup.namespace ?? namespace;
  const cross = from !== namespace;
  const ab = await kube.get<Backup>({ kind: 'AppBackup', namespace: from, name: ar.spec.appBackup.name });
  if (!ab)
    return cross
      ? crossNamespaceDenial(ar, from)
      : invalid(`spec.appBackup: AppBackup "${ar.spec.appBackup.name}" does not exist in namespace ${from}`);
  const name = ab.spec.backupStorageLocation;
  const loc = await existingLocation(kube, ferryNamespace, name);
  if (isDenial(loc))
    return cross
      ? crossNamespaceDenial(ar, from)
      : invalid(`spec.appBackup: the BackupStorageLocation "${name}" of AppBackup "${ab.metadata.name}" is gone`);
  if (!restoreAllowed(loc.spec, from, namespace))
    return cross
      ? crossNamespaceDenial(ar, from)
      : forbidden(`spec.appBackup: BackupStorageLocation "${name}" does not allow namespace ${namespace}`);
  const volumes = ar.spec.volumes ?? (ab.status?.volumes ?? []).map((v) => v.pvc);
  const collision = targetCollision(ar.spec, volumes);
  return collision ? invalid(collision) : undefined;
}

function meaningDenial(r: Backup | Restore): Denial | undefined {
  const problems = r.kind === 'AppBackup' ? backupProblems(r.spec) : restoreProblems(r.spec);
  return problems.length ? invalid(problems.join('; ')) : undefined;
}

/** A new AppBackup or AppRestore: its fields, what they mean, then what they name in the cluster. */
export async function checkAppCreate(
  kube: Kube,
  ferryNamespace: string,
  r: Backup | Restore,
): Promise<Denial | undefined> {
  const denial = fieldDenial(r.kind, 'spec', r.spec) ?? meaningDenial(r);
  if (denial) return denial;
  return r.kind === 'AppBackup'
    ? checkBackupReferences(kube, ferryNamespace, r)
    : checkRestoreReferences(kube, ferryNamespace, r);
}

/** A change of a stored one: a spec fixed at creation (but cancel), a valid status whose final phase stays. */
export function checkAppUpdate(
  old: Backup | Restore,
  next: Backup | Restore,
  subResource?: string,
): Denial | undefined {
  if (subResource === 'status') return checkStatusUpdate(old, next, appTerminalPhases(next.kind));
  if (subResource) return undefined;
  return checkSpecUpdate(old, next);
}
