// What a CopyPolicy copies: one DataCopy per Completed DataUpload of its source location that the policy selects
// (namespace, labels, schedule) and the destination location accepts, unless this policy already made it. Pure
// functions with the time passed in; ./copy-policy-reconcile.ts lists, creates and writes status.
import type { CopyPolicy, DataCopy } from '../shared/api/copy.ts';
import { parseDuration } from '../shared/api/duration.ts';
import type { BackupStorageLocationSpec, DataUpload } from '../shared/api/types.ts';
import { apiVersion } from '../shared/api/types.ts';
import { copyLabels, policyCopyName, policyLabel, syncedFromAnnotation } from '../shared/copy/names.ts';
import { copyInLocation } from '../shared/copy/existing.ts';
import { backupAllowed } from '../shared/location/namespaces.ts';
import { scheduleLabel, scheduleLabels } from '../shared/schedule/names.ts';
import { matchesSelector } from '../shared/schedule/selector.ts';
import { isOurs } from '../shared/step-job/contract.ts';

export type CopyVerdict = { copy: true } | { copy: false; why: string };

/** Does `entry` of spec.schedules ("name" in any namespace, "namespace/name") name the schedule that made `du`? */
function scheduleMatches(entry: string, du: DataUpload): boolean {
  const made = du.metadata.labels?.[scheduleLabels.schedule];
  if (made === undefined) return false;
  const slash = entry.indexOf('/');
  if (slash < 0) return made === scheduleLabel(entry);
  return entry.slice(0, slash) === du.metadata.namespace && made === scheduleLabel(entry.slice(slash + 1));
}

/** Why the policy selects `du` or not, from the DataUpload alone (its location, phase, origin and labels). */
function selected(policy: CopyPolicy, du: DataUpload, nowMs: number): CopyVerdict {
  const { spec } = policy;
  const ns = du.metadata.namespace ?? '';
  if (du.spec.backupStorageLocation !== spec.sourceLocation)
    return { copy: false, why: `stored in location "${du.spec.backupStorageLocation}", not spec.sourceLocation` };
  if (!isOurs(du as Parameters<typeof isOurs>[0])) return { copy: false, why: `moved by "${du.spec.dataMover}"` };
  const synced = du.metadata.annotations?.[syncedFromAnnotation];
  // a synced backup is another site's: copying it back and forth would loop between the sites
  if (synced !== undefined) return { copy: false, why: `synced from location "${synced}"` };
  if (du.metadata.deletionTimestamp) return { copy: false, why: 'being deleted' };
  if (du.status?.phase !== 'Completed' || !du.status.snapshotID)
    return { copy: false, why: 'not Completed with a snapshot' };
  if (spec.namespaces?.length && !spec.namespaces.includes(ns))
    return { copy: false, why: `namespace "${ns}" is not in spec.namespaces` };
  if (spec.selector && !matchesSelector(spec.selector, du.metadata.labels))
    return { copy: false, why: 'labels do not match spec.selector' };
  if (spec.schedules?.length && !spec.schedules.some((s) => scheduleMatches(s, du)))
    return { copy: false, why: 'not made by a schedule in spec.schedules' };
  // an expired copy must not come back: a backup older than the copies' lifetime would have lost its copy already
  const lifetime = parseDuration(spec.expire);
  const completed = Date.parse(du.status.completionTimestamp ?? '');
  if (lifetime !== undefined && !(completed + lifetime > nowMs))
    return { copy: false, why: `completed more than spec.expire (${spec.expire}) ago` };
  return { copy: true };
}

/**
 * The DataCopy of this policy for `du`, if one was made (by name, by spec.policy, or as the backup's status says),
 * or another copy of `du` that holds or is making its copy in the destination (by hand, or another policy's).
 */
function madeBefore(policy: CopyPolicy, du: DataUpload, copies: readonly DataCopy[]): string | undefined {
  const name = policyCopyName(du.metadata.name, policy.metadata.name);
  const recorded = du.status?.copies?.find((c) => c.dataCopy === name);
  if (recorded) return recorded.dataCopy;
  const existing = copies.find(
    (c) =>
      c.metadata.namespace === du.metadata.namespace &&
      (c.metadata.name === name || (c.spec.policy === policy.metadata.name && c.spec.dataUpload === du.metadata.name)),
  );
  return (existing ?? copyInLocation(copies, du.metadata.namespace, du.metadata.name, policy.spec.destinationLocation))
    ?.metadata.name;
}

/**
 * Whether `policy` makes a copy of `du` now. `destination` is the destination location's spec (undefined: it does
 * not exist); `copies` the DataCopies of the DataUpload's namespace.
 */
export function copyVerdict(
  policy: CopyPolicy,
  destination: BackupStorageLocationSpec | undefined,
  du: DataUpload,
  copies: readonly DataCopy[],
  nowMs: number,
): CopyVerdict {
  if (policy.spec.suspend === true) return { copy: false, why: 'the policy is suspended' };
  if (policy.metadata.deletionTimestamp) return { copy: false, why: 'the policy is being deleted' };
  if (!destination)
    return { copy: false, why: `destination location "${policy.spec.destinationLocation}" does not exist` };
  if (destination.recoverVersions === true)
    return {
      copy: false,
      why: `location "${policy.spec.destinationLocation}" has spec.recoverVersions: nothing is written there`,
    };
  if (policy.spec.destinationLocation === du.spec.backupStorageLocation)
    return { copy: false, why: 'the destination is the location the backup is in' };
  const choice = selected(policy, du, nowMs);
  if (!choice.copy) return choice;
  const ns = du.metadata.namespace ?? '';
  // the destination's rule holds whatever spec.namespaces says: the policy cannot widen who writes there
  if (!backupAllowed(destination, ns))
    return { copy: false, why: `location "${policy.spec.destinationLocation}" does not allow namespace "${ns}"` };
  const made = madeBefore(policy, du, copies);
  if (made) return { copy: false, why: `already copied by DataCopy ${ns}/${made}` };
  return { copy: true };
}

/**
 * The policy's DataCopy for `du`. Without spec.expire it belongs to the DataUpload (deleting the backup deletes the
 * copy, whose finalizer forgets the copied snapshot); with it, it carries spec.expire and lives on its own.
 */
export function policyCopy(policy: CopyPolicy, du: DataUpload): DataCopy {
  const labels: Record<string, string> = { [copyLabels.policy]: policyLabel(policy.metadata.name) };
  const schedule = du.metadata.labels?.[scheduleLabels.schedule];
  if (schedule !== undefined) labels[scheduleLabels.schedule] = schedule;
  const copy: DataCopy = {
    apiVersion,
    kind: 'DataCopy',
    metadata: {
      name: policyCopyName(du.metadata.name, policy.metadata.name),
      namespace: du.metadata.namespace,
      labels,
    },
    spec: {
      dataUpload: du.metadata.name,
      backupStorageLocation: policy.spec.destinationLocation,
      policy: policy.metadata.name,
    },
  };
  if (policy.spec.expire) copy.spec.expire = policy.spec.expire;
  else
    copy.metadata.ownerReferences = [
      { apiVersion, kind: 'DataUpload', name: du.metadata.name, uid: du.metadata.uid ?? '', blockOwnerDeletion: false },
    ];
  return copy;
}
