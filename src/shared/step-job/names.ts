// Deterministic names and labels of everything a step creates, so a step run again finds what an earlier run
// made ("already exists" is success) and `kubectl get ... -l ferry.dev/uid=<uid>` finds all of it.
import type { FerryResource } from '../api/types.ts';
import { labels } from '../api/phases.ts';

/** The native VolumeSnapshot the snapshot step takes, in the PVC's namespace. */
export function nativeSnapshotName(r: FerryResource): string {
  return `ferry-${uidOf(r)}`;
}

/** The cloned VolumeSnapshotContent and VolumeSnapshot, and the backup or restore PVC, in ferry's namespace. */
export function exposureName(r: FerryResource): string {
  return `ferry-${uidOf(r)}`;
}

export function uidOf(r: FerryResource): string {
  const uid = r.metadata.uid;
  if (!uid) throw new Error(`${r.kind} ${r.metadata.namespace}/${r.metadata.name} has no uid`);
  return uid;
}

/** Labels tying an object to its resource (a name too long for a label value is left out; the uid is enough). */
export function ownerLabels(r: FerryResource): Record<string, string> {
  const out: Record<string, string> = { [labels.kind]: r.kind, [labels.uid]: uidOf(r), [labels.namespace]: r.metadata.namespace ?? '' };
  if (r.metadata.name.length <= 63) out[labels.name] = r.metadata.name;
  return out;
}

export function uidSelector(r: FerryResource): string {
  return `${labels.uid}=${uidOf(r)}`;
}

export function describeResource(r: FerryResource): string {
  return `${r.kind}/${r.metadata.namespace}/${r.metadata.name}`;
}
