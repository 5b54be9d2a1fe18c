// The two repositories of a copy, both for the DataCopy's namespace: the source in the DataUpload's location (opened
// as it is, never created) and the destination in spec.backupStorageLocation, with that location's own derived
// password and identity, created on a first copy as a first backup creates it. A destination with spec.objectLock
// is opened with that policy, so every object the copy writes carries its retention.
import { openWithAccess, type OpenedRepository as Opened } from '../data/repository.ts';
import type { ObjectLockPolicy } from '../../engine/operations/storage.ts';
import { repositoryAccess } from '../../shared/location/access.ts';
import type { CopyContext } from './context.ts';

export interface OpenedRepository extends Opened {
  /** the destination's object-lock policy, when its location has one */
  objectLock?: ObjectLockPolicy;
}

/**
 * `read`: the source, only read (through the object versions when its location says recoverVersions). `copy`: the
 * destination, created when missing, written under its object-lock policy. `forget`: the destination as it is.
 */
export async function openLocationRepository(
  ctx: CopyContext,
  locationName: string,
  namespace: string,
  use: 'read' | 'copy' | 'forget',
): Promise<OpenedRepository> {
  const access = await repositoryAccess(
    ctx.kube,
    ctx.ferryNamespace,
    locationName,
    namespace,
    use === 'read' ? 'read' : 'write',
  );
  const opened = await openWithAccess(ctx, access, access.open, use === 'copy');
  return { ...opened, objectLock: use === 'read' ? undefined : access.open.s3?.objectLock };
}
