// The repositories a storage location's bucket holds: the folders under its prefix that can be a namespace's (one
// repository per namespace). Maintenance, the backup sync and `ferry location backups` find them from the bucket
// itself rather than from what this cluster remembers.
import type { BackupStorageLocation } from '../api/types.ts';
import type { Kube } from '../kube/kube.ts';
import { listFolders } from '../../engine/operations/storage.ts';
import { s3Access } from './access.ts';
import { repositoryLocation } from './repository.ts';

/** A namespace's name (a DNS label): what a folder under the prefix must be to hold a namespace's repository. */
export const namespaceName = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** The namespaces with a folder under the location's prefix; throws when the bucket cannot be listed. */
export async function bucketNamespaces(
  kube: Kube,
  ferryNamespace: string,
  bsl: BackupStorageLocation,
  options: { list?: typeof listFolders; signal?: AbortSignal } = {},
): Promise<string[]> {
  // a repository's location without its last segment is the folder holding every namespace's repository
  const one = repositoryLocation(bsl.spec, 'default');
  const access = await s3Access(kube, ferryNamespace, bsl);
  try {
    const folders = await (options.list ?? listFolders)(
      one.slice(0, one.lastIndexOf('/')),
      { s3: access.s3 },
      options.signal,
    );
    return folders.filter((f) => namespaceName.test(f));
  } finally {
    access.dispose();
  }
}
