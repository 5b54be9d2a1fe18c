// Snapshot files in a repository: list, save, forget.
import type { ID } from '../ids/id.ts';
import { mapConcurrent } from '../concurrency/map.ts';
import { decodeSnapshot, encodeSnapshot, type Snapshot } from '../snapshot/snapshot.ts';
import type { SnapshotEntry } from '../snapshot/select.ts';
import type { Repository } from './repository.ts';
import { removeUnlessRetained, type Retained } from './remove-unlocked.ts';

export async function listSnapshots(repo: Repository, signal?: AbortSignal): Promise<SnapshotEntry[]> {
  const ids: ID[] = [];
  for await (const id of repo.list('snapshot', signal)) ids.push(id);
  const entries = await mapConcurrent(ids, 8, async (id) => ({
    id,
    snapshot: decodeSnapshot(await repo.loadUnpacked('snapshot', id, signal)),
  }));
  return entries.sort((a, b) =>
    a.snapshot.time.ns < b.snapshot.time.ns ? -1 : a.snapshot.time.ns > b.snapshot.time.ns ? 1 : 0,
  );
}

export function saveSnapshot(repo: Repository, sn: Snapshot, signal?: AbortSignal): Promise<ID> {
  return repo.saveUnpacked('snapshot', encodeSnapshot(sn), signal);
}

/**
 * Removes snapshot files; their data stays until prune. Removing one that is already gone is success; one S3 Object
 * Lock retains stays, and is returned.
 */
export function forgetSnapshots(repo: Repository, ids: ID[]): Promise<Retained[]> {
  return removeUnlessRetained(repo.backend, 'snapshot', ids);
}
