// DataCopy and CopyPolicy at admission. Neither location trusts the other: a copy goes only into a location that
// allows the backup's namespace (a DataCopy, and every namespace a CopyPolicy names), never back into the location
// it comes from, and never into one that only reads (recoverVersions). A DataCopy's spec is fixed at creation but
// for cancel, its final phase stays final, and only ferry makes one naming a CopyPolicy. A CopyPolicy lives in
// ferry's namespace, where only the administrator writes, and may be edited (each new spec is checked again).
import { isDeepStrictEqual } from 'node:util';
import type { CopyKind, CopyPolicy, DataCopy } from '../shared/api/copy.ts';
import { copyTerminalPhases } from '../shared/api/copy.ts';
import type { BackupStorageLocation, DataUpload } from '../shared/api/types.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import { backupAllowed } from '../shared/location/namespaces.ts';
import { expressionProblems } from '../shared/schedule/selector.ts';
import { forbidden, invalid } from './admission.ts';
import type { AdmissionRequest, Denial } from './admission.ts';
import { positive } from './app-rules.ts';
import { ferryUsers } from './mirror-rules.ts';
import { existingLocation } from './references.ts';
import type { Checked } from './rules.ts';
import { asResource, checkSpecUpdate, checkStatusUpdate, fieldDenial, isDenial } from './rules.ts';

type Copy = DataCopy & KubeObject;
type Policy = CopyPolicy & KubeObject;

/** The words of every refusal for a namespace a destination does not take. */
function notAllowed(path: string, name: string, loc: BackupStorageLocation, namespace: string): Denial {
  const allowed = (loc.spec.allowedNamespaces ?? []).join(', ');
  return forbidden(`${path}: location "${name}" allows namespaces [${allowed}], not "${namespace}"`);
}

/** A location copies can be written into, or a denial naming `path`. */
async function destination(
  kube: Kube,
  ferryNamespace: string,
  name: string,
  path: string,
): Promise<BackupStorageLocation | Denial> {
  const loc = await existingLocation(kube, ferryNamespace, name, path);
  if (isDenial(loc)) return loc;
  if (loc.spec.recoverVersions === true)
    return invalid(
      `${path}: location "${name}" has spec.recoverVersions set, so it only reads; copy into a location that can be written`,
    );
  return loc;
}

function copyMeaning(spec: DataCopy['spec']): Denial | undefined {
  const problems = [
    ...positive(spec.expire, 'spec.expire'),
    ...positive(spec.operationTimeout, 'spec.operationTimeout'),
  ];
  return problems.length ? invalid(problems.join('; ')) : undefined;
}

/** Only ferry makes a policy's copies: a tenant's copy passing for one would be counted and kept by the policy. */
function policyDenial(dc: Copy, user: string | undefined, ferryNamespace: string): Denial | undefined {
  if (dc.spec.policy === undefined || (user && ferryUsers(ferryNamespace).includes(user))) return undefined;
  return forbidden(
    `spec.policy: only ferry's dispatcher makes the copies of a CopyPolicy; leave spec.policy out of a copy made by hand`,
  );
}

/** A new DataCopy: its fields, then a destination that takes this namespace and is not where the backup is. */
export async function checkCopyCreate(
  kube: Kube,
  ferryNamespace: string,
  dc: Copy,
  user?: string,
): Promise<Denial | undefined> {
  const denial =
    fieldDenial('DataCopy', 'spec', dc.spec) ?? copyMeaning(dc.spec) ?? policyDenial(dc, user, ferryNamespace);
  if (denial) return denial;
  const namespace = dc.metadata.namespace ?? '';
  const name = dc.spec.backupStorageLocation;
  const path = 'spec.backupStorageLocation';
  const loc = await destination(kube, ferryNamespace, name, path);
  if (isDenial(loc)) return loc;
  if (!backupAllowed(loc.spec, namespace)) return notAllowed(path, name, loc, namespace);
  // a DataUpload that is not there (yet) is the copy step's to judge: the copy then fails, naming it
  const du = await kube.get<DataUpload & KubeObject>({ kind: 'DataUpload', namespace, name: dc.spec.dataUpload });
  if (du?.spec.backupStorageLocation === name)
    return invalid(
      `${path}: DataUpload "${dc.spec.dataUpload}" is stored in location "${name}" already; a copy must go to another location`,
    );
  return undefined;
}

/** A change of a stored DataCopy: the spec as created (but cancel), a valid status whose final phase stays. */
export function checkCopyUpdate(old: Copy, next: Copy, subResource?: string): Denial | undefined {
  if (subResource === 'status') return checkStatusUpdate(old, next, copyTerminalPhases);
  if (subResource) return undefined;
  return checkSpecUpdate(old, next);
}

/** The pattern checks the characters; the parts' own limits are checked here. */
function scheduleProblems(schedules: readonly string[] | undefined): string[] {
  return (schedules ?? []).flatMap((ref, i) => {
    const [namespace, name] = ref.includes('/') ? ref.split('/') : [undefined, ref];
    const path = `spec.schedules[${i}]`;
    if (namespace !== undefined && namespace.length > 63)
      return [`${path}: the namespace "${namespace}" must be at most 63 characters long`];
    return name.length > 253 ? [`${path}: the schedule name must be at most 253 characters long`] : [];
  });
}

function policyMeaning(spec: CopyPolicy['spec']): Denial | undefined {
  const problems = [
    ...expressionProblems(spec.selector, 'spec.selector'),
    ...positive(spec.expire, 'spec.expire'),
    ...scheduleProblems(spec.schedules),
  ];
  if (spec.sourceLocation === spec.destinationLocation)
    problems.push(
      `spec.destinationLocation: must differ from spec.sourceLocation ("${spec.sourceLocation}"); a copy in the same location protects nothing`,
    );
  return problems.length ? invalid(problems.join('; ')) : undefined;
}

async function checkPolicySpec(
  kube: Kube,
  ferryNamespace: string,
  spec: CopyPolicy['spec'],
): Promise<Denial | undefined> {
  const denial = fieldDenial('CopyPolicy', 'spec', spec) ?? policyMeaning(spec);
  if (denial) return denial;
  const source = await existingLocation(kube, ferryNamespace, spec.sourceLocation, 'spec.sourceLocation');
  if (isDenial(source)) return source;
  const name = spec.destinationLocation;
  const loc = await destination(kube, ferryNamespace, name, 'spec.destinationLocation');
  if (isDenial(loc)) return loc;
  for (const [i, namespace] of (spec.namespaces ?? []).entries())
    if (!backupAllowed(loc.spec, namespace)) return notAllowed(`spec.namespaces[${i}]`, name, loc, namespace);
  return undefined;
}

/**
 * A CopyPolicy created or changed: in ferry's namespace only, and a spec (when new or changed) whose locations
 * exist and whose namespaces the destination takes. A change that leaves the spec alone (labels, finalizers) passes
 * even when a location has gone since.
 */
export async function checkPolicy(
  kube: Kube,
  ferryNamespace: string,
  next: Policy,
  old?: Policy,
  subResource?: string,
): Promise<Denial | undefined> {
  const namespace = next.metadata.namespace ?? '';
  if (namespace !== ferryNamespace)
    return forbidden(
      `metadata.namespace: a CopyPolicy lives in ferry's namespace ${ferryNamespace}, where only the administrator writes, not in "${namespace}"`,
    );
  if (subResource === 'status') return fieldDenial('CopyPolicy', 'status', next.status);
  if (subResource || (old && isDeepStrictEqual(old.spec, next.spec))) return undefined;
  return checkPolicySpec(kube, ferryNamespace, next.spec);
}

const copyKinds: readonly string[] = ['DataCopy', 'CopyPolicy'] satisfies CopyKind[];

export function isCopyKind(kind: string): kind is CopyKind {
  return copyKinds.includes(kind);
}

/** The denial of a create or update of a DataCopy or CopyPolicy, if any; deletion is never refused. */
export async function judgeCopyReview(
  req: AdmissionRequest,
  kind: CopyKind,
  kube: Kube,
  ferryNamespace: string,
): Promise<Denial | undefined> {
  if (req.operation !== 'CREATE' && req.operation !== 'UPDATE') return undefined;
  // the envelope is all asResource checks: the kind's own rules read the fields
  const next = asResource<Checked>(kind, req.object);
  if (isDenial(next)) return next;
  const old = req.operation === 'UPDATE' ? asResource<Checked>(kind, req.oldObject) : undefined;
  if (isDenial(old)) return invalid(`oldObject: ${old.message}`);
  if (kind === 'CopyPolicy')
    return checkPolicy(
      kube,
      ferryNamespace,
      next as unknown as Policy,
      old as unknown as Policy | undefined,
      req.subResource,
    );
  return old
    ? checkCopyUpdate(old as Copy, next as Copy, req.subResource)
    : checkCopyCreate(kube, ferryNamespace, next as Copy, req.userInfo?.username);
}
