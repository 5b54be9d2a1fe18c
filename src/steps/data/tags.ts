// How ferry's repository snapshots are tagged, so the parent of a backup (the last one of the same PVC) and the
// snapshot of a given DataUpload can be found from the repository alone, with restic too
// (`restic snapshots --tag ferry.dev/pvc=data`).
import type { DataUpload } from '../../shared/api/types.ts';
import { findLatest, type SnapshotEntry } from '../../engine/operations/snapshots.ts';

export function namespaceTag(du: DataUpload): string {
  return `ferry.dev/namespace=${du.metadata.namespace}`;
}

export function pvcTag(du: DataUpload): string {
  return `ferry.dev/pvc=${du.spec.sourcePVC}`;
}

export function uidTag(du: DataUpload): string {
  return `ferry.dev/uid=${du.metadata.uid}`;
}

/** The tags of the snapshot a DataUpload makes: ferry's own, then the user's as key=value (no commas: restic splits on them). */
export function snapshotTags(du: DataUpload): string[] {
  const own = [namespaceTag(du), pvcTag(du), uidTag(du), `ferry.dev/dataupload=${du.metadata.name}`];
  const user = Object.entries(du.spec.tags ?? {}).map(([k, v]) => `${k}=${v}`.replaceAll(',', '_'));
  return [...own, ...user];
}

/** The snapshots this DataUpload already wrote (a run that crashed after saving its snapshot). */
export function snapshotsOf(entries: readonly SnapshotEntry[], du: DataUpload): SnapshotEntry[] {
  return entries.filter((e) => e.snapshot.tags.includes(uidTag(du)));
}

/** The newest snapshot of the same PVC from another DataUpload: the parent of an incremental backup. */
export function parentOf(entries: readonly SnapshotEntry[], du: DataUpload): SnapshotEntry | undefined {
  const others = entries.filter((e) => !e.snapshot.tags.includes(uidTag(du)));
  try {
    return findLatest(others, { tags: [[namespaceTag(du), pvcTag(du)]] });
  } catch {
    return undefined;
  }
}

/** What ferry's tag `ferry.dev/<key>=` of a snapshot says, if it has one (the backup sync reads them back). */
export function ferryTag(tags: readonly string[], key: 'namespace' | 'pvc' | 'uid' | 'dataupload'): string | undefined {
  const prefix = `ferry.dev/${key}=`;
  return tags.find((t) => t.startsWith(prefix))?.slice(prefix.length);
}
