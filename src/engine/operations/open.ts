// Opening a repository, or creating it: what every use of the engine starts with. The repository it hands back is
// what the other operations take; its caller closes it. Opening takes no lock (restic's neither): it reads the
// config and a key file, which nothing but `init` writes.
import type { Backend } from '../backend/backend.ts';
import { NoRepositoryError, RepositoryExistsError } from '../repository/errors.ts';
import { Repository, type InitOptions } from '../repository/repository.ts';

export type { InitOptions, Repository };

export function openRepository(backend: Backend, password: string): Promise<Repository> {
  return Repository.open(backend, password);
}

/** Creates a repository (restic format version 2) where there is none; one already there is refused. */
export function initRepository(backend: Backend, password: string, opts?: InitOptions): Promise<Repository> {
  return Repository.init(backend, password, opts);
}

/**
 * Opens the repository, or creates it with `init` when there is none (undefined: never create). Two first backups
 * racing to create it both succeed: the loser opens what the winner wrote.
 */
export async function openOrInit(
  backend: Backend,
  password: string,
  init: InitOptions | undefined,
): Promise<Repository> {
  try {
    return await Repository.open(backend, password);
  } catch (err) {
    if (!(err instanceof NoRepositoryError) || !init) throw err;
  }
  try {
    return await Repository.init(backend, password, init);
  } catch (err) {
    if (!(err instanceof RepositoryExistsError)) throw err;
    return Repository.open(backend, password);
  }
}
