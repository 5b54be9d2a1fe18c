// The repository seen as a place to keep lock files.
import type { LockStore } from '../lock/lock.ts';
import type { Repository } from './repository.ts';

export function lockStore(repo: Repository): LockStore {
  return {
    list: () => repo.list('lock'),
    load: (id) => repo.loadUnpacked('lock', id),
    save: (plaintext) => repo.saveUnpacked('lock', plaintext),
    remove: (id) => repo.backend.remove({ type: 'lock', name: id }),
    isNotExist: (err) => repo.backend.isNotExist(err),
  };
}
