// A DataUpload the backup sync (`ferry-step location-sync`, spec.backupSync of a location) made on this cluster for
// a backup it found in the location's repositories: it names a snapshot another cluster wrote, so no step but the
// delete step ever runs for it, and only the sync's account sets the mark, at creation.
import type { DataUpload, FerryResource } from '../api/types.ts';

/** the location the DataUpload was synced from */
export const syncedFromAnnotation = 'ferry.dev/synced-from';
/** "true" on every synced DataUpload: what the sync lists them by */
export const syncedLabel = 'ferry.dev/synced';

/** The ServiceAccount the sync's pods run as (policies/step-sync.yaml). */
export const syncAccount = 'ferry-step-sync';

export function syncUser(ferryNamespace: string): string {
  return `system:serviceaccount:${ferryNamespace}:${syncAccount}`;
}

/** The location a synced DataUpload came from; undefined for every other resource. */
export function syncedFrom(r: FerryResource | DataUpload): string | undefined {
  return r.kind === 'DataUpload' ? r.metadata.annotations?.[syncedFromAnnotation] : undefined;
}
