// Deterministic names of everything a step creates, so a step run again finds what an earlier run made ("already
// exists" is success); their labels are the step-Job contract's resourceLabels, so `kubectl get ... -l
// ferry.dev/uid=<uid>` finds all of it.
import type { FerryResource } from '../api/types.ts';

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
