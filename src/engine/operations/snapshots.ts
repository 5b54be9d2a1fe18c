// The repository's snapshots, oldest first, under a shared lock as restic's `snapshots` lists them: no forget or
// prune removes files from under the listing. Choosing among them (latest of a path, an id prefix) and showing their
// times as restic does are pure and need no repository, so those helpers are handed through as they are.
import { listSnapshots } from '../repository/snapshots.ts';
import type { Repository } from '../repository/repository.ts';
import type { SnapshotEntry } from '../snapshot/select.ts';
import { underLock, type LockingOptions } from './locked.ts';

export { findLatest, resolveSnapshotID, selectSnapshot, type SnapshotEntry } from '../snapshot/select.ts';
export { formatGoTime, localTime } from '../tree/gotime.ts';
export type { ID } from '../ids/id.ts';

/**
 * The listing without a lock (restic's --no-lock): it writes nothing, so read-only credentials do, and so does a
 * location nothing may be written to (one read past its delete markers).
 */
export { listSnapshots as snapshotsWithoutLock } from '../repository/snapshots.ts';

export function snapshots(repo: Repository, opts: LockingOptions = {}): Promise<SnapshotEntry[]> {
  return underLock(repo, false, opts, (signal) => listSnapshots(repo, signal));
}
