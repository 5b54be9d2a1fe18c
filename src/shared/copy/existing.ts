// Whether a backup already has a copy in a location: two DataCopies of one backup into one location would share the
// copied snapshot there (the copy skips what the destination already holds), and deleting either would forget it
// under the other. A failed or canceled copy holds nothing; one being deleted still does until its finalizer ends.
import type { DataCopy } from '../api/copy.ts';

export function copyInLocation(
  copies: readonly DataCopy[],
  namespace: string | undefined,
  dataUpload: string,
  location: string,
): DataCopy | undefined {
  return copies.find(
    (c) =>
      c.metadata.namespace === namespace &&
      c.spec.dataUpload === dataUpload &&
      c.spec.backupStorageLocation === location &&
      c.status?.phase !== 'Failed' &&
      c.status?.phase !== 'Canceled',
  );
}
