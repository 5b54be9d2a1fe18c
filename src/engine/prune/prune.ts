// Prune, under the repository's exclusive lock: find what snapshots still use, copy the used blobs out of
// mostly-unused packs, write one new set of index files that supersedes all old ones, and only then delete old
// index files and packs. A crash at any point leaves a readable repository: before the new index is written
// nothing was deleted, and afterwards the packs still to be deleted are merely unreferenced.
import type { ID } from '../ids/id.ts';
import { mapConcurrent } from '../concurrency/map.ts';
import { encodeIndexFile, type IndexPack } from '../index/index-file.ts';
import { prepareBlob } from '../pack/prepare.ts';
import type { PackedBlob } from '../pack/blob.ts';
import type { Repository } from '../repository/repository.ts';
import { loadSnapshotTrees, walkTrees } from '../repository/walk.ts';
import { BlobTable } from '../index/table.ts';
import { keepOneCopy, packUsage, planPrune, type PrunePlan } from './plan.ts';
import { PackWriter, repoParts } from '../repository/pack-writer.ts';
import { removeUnlessRetained, type Retained } from '../repository/remove-unlocked.ts';
import { indexText, readIndexFile } from '../index/index-file.ts';

export interface PruneOptions {
  repackUnusedFraction?: number;
  dryRun?: boolean;
  signal?: AbortSignal;
}

export interface PruneResult {
  plan: PrunePlan;
  packsDeleted: number;
  packsWritten: number;
  bytesFreed: number;
  indexFilesRewritten: number;
  /** index files and packs S3 Object Lock still retains: left in place, freed by a prune after their retention */
  retained: Retained[];
}

const indexPacksPerFile = 2000;

/** The prune itself; its caller holds the repository's exclusive lock. */
export async function pruneLocked(repo: Repository, opts: PruneOptions): Promise<PruneResult> {
  const signal = opts.signal;
  await repo.loadIndex(signal);
  const used = new Uint8Array(repo.index.size);
  // the locations of each used blob stored in more than one pack
  const copies: number[][] = [];
  const mark = (id: ID, type: 'data' | 'tree'): void => {
    const pos = repo.index.position(id, type);
    if (pos < 0)
      throw new Error(
        `${type} blob ${id} is used by a snapshot but missing from the index; run "ferry repo check" before pruning`,
      );
    if (used[pos] === 1) return;
    const all = repo.index.positions(id, type);
    for (const at of all) used[at] = 1;
    if (all.length > 1) copies.push(all);
  };
  const snapshots = await loadSnapshotTrees(repo, signal);
  await walkTrees(
    repo,
    snapshots.map((s) => s.tree),
    { tree: (id) => mark(id, 'tree'), data: (id) => mark(id, 'data') },
    signal,
  );
  keepOneCopy(used, copies, (at) => repo.index.packAt(at));

  const usage = packUsage(withUse(repo.index, used));
  const storedSizes = new Map<ID, number>();
  for await (const f of repo.backend.list('pack', signal)) storedSizes.set(f.name, f.size);
  const plan = planPrune(usage.values(), { repackUnusedFraction: opts.repackUnusedFraction ?? 0.5 });
  // packs no index names (left by interrupted backups) are deleted too: nothing can reference their blobs
  const orphans = [...storedSizes.keys()].filter((id) => !usage.has(id));
  const result: PruneResult = {
    plan,
    packsDeleted: 0,
    packsWritten: 0,
    bytesFreed: 0,
    indexFilesRewritten: 0,
    retained: [],
  };
  if (opts.dryRun || (plan.remove.length === 0 && plan.repack.length === 0 && orphans.length === 0)) return result;

  // a kept pack is indexed whole, copies of blobs kept elsewhere included: an index lists every blob of a pack
  const next = new BlobTable(repo.index.size);
  const keep = new Set(plan.keep);
  const repack = new Map<ID, PackedBlob[]>(plan.repack.map((id) => [id, []]));
  for (let i = 0; i < repo.index.size; i++) {
    const b = repo.index.at(i);
    if (keep.has(b.pack)) next.add(b.pack, b);
    else if (used[i] === 1) repack.get(b.pack)?.push(b);
  }
  // new packs are recorded in `next` only; the index files written below describe them
  const writer = new PackWriter({ ...repoParts(repo), index: next }, { writeIndexFiles: false });
  for (const [pack, blobs] of repack) await copyBlobs(repo, pack, blobs, writer, signal);
  await writer.flush(signal);
  result.packsWritten = writer.stats.packs;

  const oldIndexFiles = [...repo.indexFiles];
  result.indexFilesRewritten = await writeIndexFiles(repo, next, oldIndexFiles, signal);
  const keptIndexes = await removeUnlessRetained(repo.backend, 'index', oldIndexFiles);
  // a retained index file still names its packs: they stay too, so no index ever names a pack that is gone
  const named = await packsNamedIn(
    repo,
    keptIndexes.map((f) => f.name),
    signal,
  );
  const doomed = [...plan.remove, ...plan.repack, ...orphans].filter((id) => !named.has(id));
  const keptPacks = await removeUnlessRetained(repo.backend, 'pack', doomed, (id) => {
    result.packsDeleted++;
    result.bytesFreed += storedSizes.get(id) ?? 0;
  });
  result.retained = [...keptIndexes, ...keptPacks];
  return result;
}

async function packsNamedIn(repo: Repository, indexFiles: ID[], signal?: AbortSignal): Promise<Set<ID>> {
  const packs = new Set<ID>();
  for (const id of indexFiles) {
    const text = indexText(await repo.loadUnpacked('index', id, signal));
    readIndexFile(text, id, (pack) => packs.add(pack));
  }
  return packs;
}

function* withUse(index: BlobTable, used: Uint8Array) {
  for (let i = 0; i < index.size; i++) yield { ...index.at(i), used: used[i] === 1 };
}

async function copyBlobs(
  repo: Repository,
  pack: ID,
  blobs: PackedBlob[],
  writer: PackWriter,
  signal?: AbortSignal,
): Promise<void> {
  const bytes = await repo.backend.load({ type: 'pack', name: pack }, 0, 0, signal);
  for (const b of blobs) {
    if (!writer.claim(b.type, b.id)) continue;
    const plain = repo.openPackedBlob(pack, b, bytes.subarray(b.offset, b.offset + b.length));
    await writer.add(prepareBlob(repo.key, b.type, b.id, plain, repo.config.version >= 2), plain.length, signal);
  }
}

async function writeIndexFiles(
  repo: Repository,
  table: BlobTable,
  supersedes: ID[],
  signal?: AbortSignal,
): Promise<number> {
  const byPack = new Map<ID, PackedBlob[]>();
  for (const b of table.entries()) {
    let list = byPack.get(b.pack);
    if (!list) byPack.set(b.pack, (list = []));
    list.push({ id: b.id, type: b.type, offset: b.offset, length: b.length, uncompressedLength: b.uncompressedLength });
  }
  const packs: IndexPack[] = [...byPack].map(([id, blobs]) => ({ id, blobs }));
  let files = 0;
  for (let i = 0; i < packs.length || i === 0; i += indexPacksPerFile) {
    const id = await repo.saveUnpacked(
      'index',
      encodeIndexFile({ supersedes: i === 0 ? supersedes : [], packs: packs.slice(i, i + indexPacksPerFile) }),
      signal,
    );
    repo.indexFiles.add(id);
    files++;
  }
  return files;
}
