// The repositories a storage location's bucket holds: the folders under its prefix that can be a namespace's (one
// repository per namespace). Maintenance finds the repositories to maintain this way, and the backup sync the
// backups another cluster wrote, from the bucket itself rather than from what this cluster remembers.
import type { BackupStorageLocation } from '../../shared/api/types.ts';
import { listFolders } from '../../engine/operations/storage.ts';
import { s3Access, type S3Access } from '../../shared/location/access.ts';
import { repositoryLocation } from '../../shared/location/repository.ts';
import type { MaintenanceContext } from './repository.ts';

export const namespaceName = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The namespaces with a folder under the location's prefix; throws when the bucket cannot be listed. */
export async function repositoryFolders(ctx: MaintenanceContext, bsl: BackupStorageLocation): Promise<string[]> {
  // the folder holding every namespace's repository: a repository's location without its last segment
  const one = repositoryLocation(bsl.spec, 'default');
  const root = one.slice(0, one.lastIndexOf('/'));
  let access: S3Access | undefined;
  try {
    access = await s3Access(ctx.kube, ctx.ferryNamespace, bsl);
    const folders = await (ctx.listFolders ?? listFolders)(root, { s3: access.s3 }, ctx.signal);
    return folders.filter((f) => namespaceName.test(f));
  } finally {
    access?.dispose();
  }
}
