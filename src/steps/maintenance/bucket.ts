// The repositories a storage location's bucket holds: the folders under its prefix that can be a namespace's (one
// repository per namespace). Maintenance finds the repositories to maintain this way, and the backup sync the
// backups another cluster wrote, from the bucket itself rather than from what this cluster remembers.
import type { BackupStorageLocation } from '../../shared/api/types.ts';
import { bucketNamespaces } from '../../shared/location/bucket-namespaces.ts';
import type { MaintenanceContext } from './repository.ts';

/** The namespaces with a folder under the location's prefix; throws when the bucket cannot be listed. */
export function repositoryFolders(ctx: MaintenanceContext, bsl: BackupStorageLocation): Promise<string[]> {
  return bucketNamespaces(ctx.kube, ctx.ferryNamespace, bsl, { list: ctx.listFolders, signal: ctx.signal });
}
