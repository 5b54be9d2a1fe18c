// Retention that follows the backups kept: on an object-lock repository, every file a kept snapshot needs to be
// restored (config, keys, the snapshot files, the index files, and each pack holding one of their trees or data
// blobs) has its retention extended to now + the policy's period. Files only forgotten snapshots need are left to
// run out, after which prune frees them. Its caller holds a lock on the repository (shared: nothing is removed).
import type { FileType, Handle } from '../backend/backend.ts';
import { PermanentError } from '../backend/backend.ts';
import { mapConcurrent } from '../concurrency/map.ts';
import type { ID } from '../ids/id.ts';
import type { BlobType } from '../pack/blob.ts';
import type { Repository } from '../repository/repository.ts';
import { loadSnapshotTrees, walkTrees } from '../repository/walk.ts';

export interface RetentionResult {
  /** files whose retention was looked at, and those of them whose retention was extended */
  files: number;
  extended: number;
  snapshots: number;
}

export async function extendRetentionLocked(repo: Repository, signal?: AbortSignal): Promise<RetentionResult> {
  const retention = repo.backend.retention;
  if (!retention) {
    throw new PermanentError(
      `${repo.backend.location} is open without an object-lock policy: pass one (mode GOVERNANCE or COMPLIANCE and a retention period) to extend retention.`,
    );
  }
  await repo.loadIndex(signal);
  const snapshots = await loadSnapshotTrees(repo, signal);
  const packs = new Set<ID>();
  const holders = (type: BlobType) => (id: ID) => {
    for (const at of repo.index.locations(id, type)) packs.add(at.pack);
  };
  await walkTrees(
    repo,
    snapshots.map((s) => s.tree),
    { tree: holders('tree'), data: holders('data') },
    signal,
  );
  const handles: Handle[] = [{ type: 'config', name: '' }];
  const add = (type: FileType, names: Iterable<ID>) => {
    for (const name of names) handles.push({ type, name });
  };
  const keys: ID[] = [];
  for await (const id of repo.list('key', signal)) keys.push(id);
  add('key', keys);
  add(
    'snapshot',
    snapshots.map((s) => s.id),
  );
  add('index', repo.indexFiles);
  add('pack', packs);
  let extended = 0;
  await mapConcurrent(handles, 8, async (h) => {
    signal?.throwIfAborted();
    if (await retention.extend(h)) extended++;
  });
  return { files: handles.length, extended, snapshots: snapshots.length };
}
