// Adding a password that opens the repository, under a shared lock as restic's `key add` takes: a new key file
// only adds, so backups and restores go on beside it, but no prune or check runs while it is written.
import type { Repository } from '../repository/repository.ts';
import { underLock, type LockingOptions } from './locked.ts';

/** The new key file's id; the existing passwords keep working. */
export function addKey(repo: Repository, password: string, opts: LockingOptions = {}): Promise<string> {
  return underLock(repo, false, opts, () => repo.addKey(password));
}
