// Crash resume: packs that reached storage but whose index file was never written are read back from their own
// headers and indexed, so the next run reuses them instead of uploading the same data again.
import type { FileInfo } from '../backend/backend.ts';
import type { ID } from '../ids/id.ts';
import { encodeIndexFile } from '../index/index-file.ts';
import type { PackedBlob } from '../pack/blob.ts';
import { mapConcurrent } from '../concurrency/map.ts';
import type { Repository } from './repository.ts';

export interface AdoptResult {
  packs: number;
  blobs: number;
  /** packs whose header could not be read; check and prune deal with them */
  unreadable: ID[];
}

/** Every pack in storage. Listing needs no index, so a backup lists while it loads the index. */
export async function listPacks(repo: Repository, signal?: AbortSignal): Promise<FileInfo[]> {
  const packs: FileInfo[] = [];
  for await (const f of repo.backend.list('pack', signal)) packs.push(f);
  return packs;
}

/** `stored`: the packs in storage, listed after the lock was taken (by default, listed here). */
export async function adoptUnindexedPacks(
  repo: Repository,
  signal?: AbortSignal,
  stored?: Promise<FileInfo[]>,
): Promise<AdoptResult> {
  const known = new Set(repo.index.packs());
  const orphans: { id: ID; size: number }[] = [];
  for (const f of await (stored ?? listPacks(repo, signal)))
    if (!known.has(f.name)) orphans.push({ id: f.name, size: f.size });
  const adopted: { id: ID; blobs: PackedBlob[] }[] = [];
  const unreadable: ID[] = [];
  await mapConcurrent(orphans, 8, async (p) => {
    try {
      adopted.push({ id: p.id, blobs: await repo.readPackHeader(p.id, p.size, signal) });
    } catch {
      unreadable.push(p.id);
    }
  });
  let blobs = 0;
  for (const p of adopted) for (const b of p.blobs) if (repo.index.add(p.id, b)) blobs++;
  if (adopted.length > 0) {
    repo.indexFiles.add(await repo.saveUnpacked('index', encodeIndexFile({ supersedes: [], packs: adopted }), signal));
  }
  return { packs: adopted.length, blobs, unreadable };
}
