// Who may mark a DataUpload as synced (ferry.dev/synced-from): only the backup sync's account, at creation, and that
// account creates nothing else. The mark stops every step but the delete step and makes its deletion forget a
// snapshot in the named location, so a tenant who could set it could have ferry forget a backup that is not
// theirs to name. Nobody adds, changes or removes it afterwards; a synced DataUpload's status (its snapshot, the
// one a restore reads) is the sync's to write, and once it is being deleted, ferry's delete step's and dispatcher's
// too (they record why the deletion waits). The user name comes from the apiserver (./mirror-rules.ts says how).
import type { FerryResource } from '../shared/api/types.ts';
import { syncedFrom, syncedFromAnnotation, syncUser } from '../shared/location/synced.ts';
import { forbidden } from './admission.ts';
import type { Denial } from './admission.ts';
import { ferryUsers } from './mirror-rules.ts';

export function checkSyncedCreate(r: FerryResource, user: string | undefined, namespace: string): Denial | undefined {
  const sync = user === syncUser(namespace);
  const marked = r.metadata.annotations?.[syncedFromAnnotation] !== undefined;
  if (marked && r.kind !== 'DataUpload')
    return forbidden(
      `metadata.annotations: ${syncedFromAnnotation} marks a synced DataUpload; a ${r.kind} is never one`,
    );
  if (marked && !sync)
    return forbidden(
      `metadata.annotations: ${syncedFromAnnotation} marks a DataUpload made by a location's backup sync, which only its account (${syncUser(namespace)}) creates; remove it`,
    );
  if (sync && !marked)
    return forbidden(`the backup sync's account creates only synced DataUploads (annotated ${syncedFromAnnotation})`);
  return undefined;
}

export function checkSyncedUpdate(old: FerryResource, next: FerryResource): Denial | undefined {
  if (syncedFrom(old) === syncedFrom(next)) return undefined;
  return forbidden(`metadata.annotations: ${syncedFromAnnotation} cannot be added, changed or removed`);
}

export function checkSyncedStatus(old: FerryResource, user: string | undefined, namespace: string): Denial | undefined {
  const from = syncedFrom(old);
  if (!from || user === syncUser(namespace)) return undefined;
  const deleting = old.metadata.deletionTimestamp !== undefined;
  const ferry = [...ferryUsers(namespace), `system:serviceaccount:${namespace}:ferry-step-delete`];
  if (deleting && user && ferry.includes(user)) return undefined;
  return forbidden(
    `status: DataUpload ${old.metadata.namespace}/${old.metadata.name} was synced from BackupStorageLocation ${from}; only the backup sync writes its status`,
  );
}
