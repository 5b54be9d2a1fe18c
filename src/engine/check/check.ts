// Repository check: the index agrees with the packs in storage, every snapshot's trees load and keep restic's
// invariants (tree/validate.ts: names, subtrees, every referenced data blob indexed), and (with readData) every
// pack the index names, including one whose blobs all live elsewhere too, hashes to its name and every blob in it
// decrypts and hashes to its id.
// Packs no index mentions are reported but are not errors: an interrupted backup leaves them, and prune or the
// next backup reuses them.
import { hashID, type ID } from '../ids/id.ts';
import { mapConcurrent } from '../concurrency/map.ts';
import { decodeHeader, entrySize, headerRange } from '../pack/header.ts';
import { sealOverhead } from '../crypto/seal.ts';
import type { PackedBlob } from '../pack/blob.ts';
import type { Repository } from '../repository/repository.ts';
import { loadSnapshotTrees, walkTrees } from '../repository/walk.ts';
import { InvalidTreeError } from '../tree/validate.ts';

export interface CheckOptions {
  readData?: boolean;
  /** with readData: the fraction of packs (0..1] to read, chosen at random */
  readDataSubset?: number;
  signal?: AbortSignal;
  onProgress?: (phase: string, done: number, total: number) => void;
}

export interface CheckResult {
  errors: string[];
  orphanedPacks: ID[];
  snapshots: number;
  trees: number;
  packsRead: number;
  blobsRead: number;
}

export async function checkRepository(repo: Repository, opts: CheckOptions = {}): Promise<CheckResult> {
  const result: CheckResult = { errors: [], orphanedPacks: [], snapshots: 0, trees: 0, packsRead: 0, blobsRead: 0 };
  await repo.loadIndex(opts.signal);
  const expected = expectedPacks(repo);
  const stored = new Map<ID, number>();
  for await (const f of repo.backend.list('pack', opts.signal)) stored.set(f.name, f.size);
  for (const [id, p] of expected) {
    const size = stored.get(id);
    if (size === undefined)
      result.errors.push(
        `pack ${id} is in the index but missing from storage (blobs ${p.blobs
          .slice(0, 3)
          .map((b) => b.id.slice(0, 8))
          .join(', ')}...)`,
      );
    else if (size !== p.size) result.errors.push(`pack ${id} has ${size} bytes where the index expects ${p.size}`);
  }
  for (const id of stored.keys()) if (!expected.has(id)) result.orphanedPacks.push(id);

  const snapshots = await loadSnapshotTrees(repo, opts.signal).catch((err: Error) => {
    result.errors.push(`snapshots could not be read: ${err.message}`);
    return [];
  });
  result.snapshots = snapshots.length;
  await checkTrees(
    repo,
    snapshots.map((s) => s.tree),
    result,
    opts.signal,
  );

  if (opts.readData) {
    const ids = [...expected.keys()].filter((id) => stored.has(id));
    const subset = opts.readDataSubset ?? 1;
    const chosen = subset >= 1 ? ids : ids.filter(() => Math.random() < subset);
    let done = 0;
    await mapConcurrent(chosen, 4, async (id) => {
      await checkPackData(repo, id, expected.get(id)!.blobs, result, opts.signal);
      opts.onProgress?.('read data', ++done, chosen.length);
    });
  }
  return result;
}

interface ExpectedPack {
  size: number;
  blobs: PackedBlob[];
}

/**
 * Pack sizes as the index implies them: the blobs, the sealed header and its 4-byte length. Every location counts:
 * a pack holding blobs that also live elsewhere is as big as all it holds.
 */
function expectedPacks(repo: Repository): Map<ID, ExpectedPack> {
  const packs = new Map<ID, ExpectedPack>();
  for (const b of repo.index.entries()) {
    let p = packs.get(b.pack);
    if (!p) {
      p = { size: sealOverhead + 4, blobs: [] };
      packs.set(b.pack, p);
    }
    p.blobs.push(b);
    p.size += b.length + entrySize(b);
  }
  return packs;
}

async function checkTrees(repo: Repository, roots: ID[], result: CheckResult, signal?: AbortSignal): Promise<void> {
  await walkTrees(
    repo,
    roots,
    {
      tree: () => result.trees++,
      fault: (id, err) => {
        if (err instanceof InvalidTreeError)
          for (const f of err.faults) result.errors.push(`tree ${id}: entry ${f.entry}: ${f.reason}`);
        else result.errors.push(`tree ${id} cannot be read: ${err.message}`);
      },
    },
    signal,
  );
}

async function checkPackData(
  repo: Repository,
  id: ID,
  indexed: PackedBlob[],
  result: CheckResult,
  signal?: AbortSignal,
): Promise<void> {
  let bytes: Uint8Array;
  try {
    bytes = await repo.backend.load({ type: 'pack', name: id }, 0, 0, signal);
  } catch (err) {
    result.errors.push(`pack ${id} cannot be read: ${(err as Error).message}`);
    return;
  }
  result.packsRead++;
  const hash = hashID(bytes);
  if (hash !== id) result.errors.push(`pack ${id} is corrupted: its content hashes to ${hash}`);
  let header: PackedBlob[];
  try {
    const range = headerRange(bytes.length, bytes.subarray(bytes.length - 4));
    header = decodeHeader(repo.key, bytes.subarray(range.offset, range.offset + range.length), bytes.length);
  } catch (err) {
    result.errors.push(`pack ${id} has an unreadable header: ${(err as Error).message}`);
    header = indexed;
  }
  for (const b of header) {
    result.blobsRead++;
    try {
      repo.openPackedBlob(id, b, bytes.subarray(b.offset, b.offset + b.length));
    } catch (err) {
      result.errors.push((err as Error).message);
    }
  }
}
