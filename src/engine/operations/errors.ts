// The failures a caller of the operations tells apart (a step turns them into a reason a user can act on): the
// repository's, the restore's, the snapshot selection's, the locks', and the storage's "retrying cannot help".
export { CorruptBlobError, MissingBlobError, NoRepositoryError, RepositoryError, RepositoryExistsError, WrongPasswordError } from '../repository/errors.ts';
export { RestoreError } from '../restore/restorer.ts';
export { AmbiguousSnapshotIDError, SnapshotNotFoundError } from '../snapshot/select.ts';
export { LockConflictError, LockLostError } from '../lock/lock.ts';
export { isPermanent, PermanentError } from '../backend/backend.ts';
