// The failures a caller of the operations tells apart (a step turns them into a reason a user can act on): the
// repository's, the restore's, the snapshot selection's, the locks', and the storage's "retrying cannot help".
export { NoRepositoryError, RepositoryError } from '../repository/errors.ts';
export { RestoreError } from '../restore/restorer.ts';
export { AmbiguousSnapshotIDError, SnapshotNotFoundError } from '../snapshot/select.ts';
export { LockConflictError } from '../lock/lock.ts';
export { isPermanent } from '../backend/backend.ts';
