// The two repositories of a copy, both for the DataCopy's namespace: the source in the DataUpload's location (opened
// as it is, never created) and the destination in spec.backupStorageLocation, with that location's own derived
// password and identity, created on a first copy as a first backup creates it. A destination with spec.objectLock
// is opened with that policy, so every object the copy writes carries its retention.
import type { BackupStorageLocation } from '../../shared/api/types.ts';
import { parseDuration } from '../../shared/api/duration.ts';
import { openWithAccess, type OpenedRepository as Opened } from '../data/repository.ts';
import type { ObjectLockPolicy } from '../../engine/operations/storage.ts';
import { readLocation, repositoryAccess } from '../../shared/location/access.ts';
import type { CopyContext } from './context.ts';

export interface OpenedRepository extends Opened {
  /** the destination's object-lock policy, when its location has one */
  objectLock?: ObjectLockPolicy;
}

const day = 24 * 3600_000;

/** The location's spec.objectLock as the engine takes it ("30d" or a Go duration such as "720h"). */
export function lockPolicyOf(bsl: BackupStorageLocation): ObjectLockPolicy | undefined {
  const lock = bsl.spec.objectLock;
  if (!lock) return undefined;
  const days = /^(\d+)d$/.exec(lock.retention);
  const retentionMs = days ? Number(days[1]) * day : parseDuration(lock.retention);
  if (!retentionMs)
    throw new Error(
      `BackupStorageLocation ${bsl.metadata.name}: spec.objectLock.retention "${lock.retention}" is no period`,
    );
  return { mode: lock.mode, retentionMs };
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
  const bsl = await readLocation(ctx.kube, ctx.ferryNamespace, locationName);
  const objectLock = use === 'read' ? undefined : lockPolicyOf(bsl);
  const recoverVersions = use === 'read' && bsl.spec.recoverVersions === true;
  const access = await repositoryAccess(ctx.kube, ctx.ferryNamespace, locationName, namespace);
  const s3 = {
    ...access.open.s3,
    ...(objectLock ? { objectLock } : {}),
    ...(recoverVersions ? { recoverVersions } : {}),
  };
  const opened = await openWithAccess(ctx, access, { ...access.open, s3 }, use === 'copy');
  return { ...opened, objectLock };
}
