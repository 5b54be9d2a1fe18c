// What a location's spec.objectLock and spec.recoverVersions mean for a step opening one of its repositories: the
// S3 Object Lock policy every object it writes gets, and whether it reads what the object versions hold. A
// location in recovery mode is for restores and listings only, so a step that would write there is refused before
// it opens anything, naming the field to change.
import type { ObjectLockPolicy } from '../../engine/operations/storage.ts';
import { retentionMs, retentionRule } from '../api/object-lock.ts';
import type { BackupStorageLocation } from '../api/types.ts';
import { LocationError } from './errors.ts';

/** How a step uses the repository: a restore or a listing reads; a backup, copy, delete or prune writes. */
export type RepositoryUse = 'read' | 'write';

/** The S3 settings a step opens the location's repositories with, for `use`. */
export function objectLockSettings(
  bsl: BackupStorageLocation,
  use: RepositoryUse,
): { objectLock?: ObjectLockPolicy; recoverVersions?: boolean } {
  const { objectLock, recoverVersions } = bsl.spec;
  const name = bsl.metadata.name;
  if (recoverVersions) {
    if (use === 'write')
      throw new LocationError(
        `BackupStorageLocation "${name}" has spec.recoverVersions set: it is open only to read what its object versions hold (restores, listings, backup sync), so nothing may be written there; unset spec.recoverVersions to back up, copy, delete or prune.`,
      );
    return { recoverVersions: true };
  }
  if (!objectLock) return {};
  const ms = retentionMs(objectLock.retention);
  if (ms === undefined)
    throw new LocationError(
      `BackupStorageLocation "${name}" has spec.objectLock.retention "${objectLock.retention}": use whole days (30d) or hours, minutes, seconds (720h, 90s), ${retentionRule}.`,
    );
  return { objectLock: { mode: objectLock.mode, retentionMs: ms } };
}
