// Copying snapshots from one repository into another, as restic's copy does; its caller holds a shared lock on
// both. Each chosen snapshot that the destination does not hold yet (already-copied.ts) has its trees walked in the
// source, every tree and data blob the destination lacks crosses over re-encrypted (blob-transfer.ts), the packs
// and their index are stored, and only then is the snapshot written: a copy that fails leaves data the next run
// reuses (or prune removes), never a snapshot whose data is incomplete.
// The snapshot keeps its fields but its parent (meaningless in another repository) and gets `original`, so the
// next run, ferry's or restic's, knows it for a copy.
import type { ID } from '../ids/id.ts';
import type { PackWriterOptions, WriterStats } from '../repository/pack-writer.ts';
import { adoptUnindexedPacks } from '../repository/adopt.ts';
import type { Repository } from '../repository/repository.ts';
import { listSnapshots, saveSnapshot } from '../repository/snapshots.ts';
import { selectSnapshots, type SnapshotEntry, type SnapshotFilter } from '../snapshot/select.ts';
import { displayName } from '../tree/node.ts';
import { CopiedSnapshots, persistentID } from './already-copied.ts';
import { BlobTransfer, type TransferCounts } from './blob-transfer.ts';

export interface CopyOptions {
  /** snapshot ids, unique prefixes of them, or "latest" (with the filter); none: every snapshot the filter matches */
  snapshots?: readonly string[];
  filter?: SnapshotFilter;
  writer?: PackWriterOptions;
  onProgress?: (p: Readonly<CopyProgress>) => void;
  /** told of each chosen snapshot once it is copied or found copied already */
  onSnapshot?: (s: Readonly<CopiedSnapshot>) => void;
  signal?: AbortSignal;
}

export interface CopyProgress extends TransferCounts {
  snapshotsDone: number;
  snapshotsTotal: number;
  /** bytesTotal stops growing once the last snapshot's trees are walked */
  totalsFinal: boolean;
}

export interface CopiedSnapshot {
  /** the snapshot in the source */
  source: ID;
  /** its copy in the destination: made now, or found there */
  copy: ID;
  skipped: boolean;
}

export interface CopyResult {
  snapshots: CopiedSnapshot[];
  /** what this copy wrote into the destination */
  stats: WriterStats;
  /** packs an interrupted run had stored in the destination without indexing them, indexed now and reused */
  adoptedPacks: number;
  /**
   * False when the repositories chunk with different polynomials: copied files keep the source's chunks (nothing is
   * re-chunked, as with restic), so they do not deduplicate against data the destination chunked itself.
   */
  samePolynomial: boolean;
}

/** Names the source snapshot whose copy failed; the cause says which tree, blob or pack. */
export class CopyError extends Error {}

/**
 * Snapshots are written in batches, each once the data of all of them is stored: a batch closes when it has queued
 * a pack's worth of new data, or at the end. Copying many small incremental snapshots then stores a few full packs,
 * not a small one per snapshot (restic's copy learnt the same: restic issue 5453).
 */
const batchBytes = 16 << 20;

export async function copyLocked(
  source: Repository,
  destination: Repository,
  opts: CopyOptions = {},
): Promise<CopyResult> {
  const signal = opts.signal;
  const [from, to] = await Promise.all([
    listSnapshots(source, signal),
    listSnapshots(destination, signal),
    source.loadIndex(signal),
    destination.loadIndex(signal),
  ]);
  // packs an interrupted copy stored without their index file are reused, not sent again
  const adopted = await adoptUnindexedPacks(destination, signal);
  const chosen = selectSnapshots(from, opts.snapshots ?? [], opts.filter);
  const copies = new CopiedSnapshots(to);
  const writer = destination.writer(opts.writer);
  const progress: CopyProgress = {
    snapshotsDone: 0,
    snapshotsTotal: chosen.length,
    blobsDone: 0,
    bytesDone: 0,
    bytesTotal: 0,
    totalsFinal: false,
  };
  const report = throttle(() => opts.onProgress?.(Object.assign(progress, transfer.counts)));
  const transfer = new BlobTransfer(source, destination, writer, report.tick);
  const result: CopyResult = {
    snapshots: [],
    stats: writer.stats,
    adoptedPacks: adopted.packs,
    samePolynomial: source.config.chunkerPolynomial === destination.config.chunkerPolynomial,
  };
  const done = (entry: SnapshotEntry, copy: ID, skipped: boolean): void => {
    const s = { source: entry.id, copy, skipped };
    result.snapshots.push(s);
    progress.snapshotsDone++;
    opts.onSnapshot?.(s);
  };
  let batch: SnapshotEntry[] = [];
  let batchStart = 0;
  const commit = async (): Promise<void> => {
    if (batch.length === 0) return;
    await failingAs(
      batch,
      async () => {
        await transfer.drain(signal);
        await writer.flush(signal);
      },
      signal,
    );
    for (const entry of batch) {
      // a lock lost during the flush: no snapshot is written without it
      signal?.throwIfAborted();
      const snapshot = { ...entry.snapshot, parent: null, original: persistentID(entry) };
      const copy = await saveSnapshot(destination, snapshot, signal);
      copies.record(entry, { id: copy, snapshot });
      done(entry, copy, false);
    }
    batch = [];
    batchStart = transfer.counts.bytesTotal;
  };
  // trees shared by several snapshots are walked once, as restic does
  const walked = new Set<ID>();
  for (const entry of chosen) {
    // a source holding a snapshot twice (itself and a copy of it) has it copied once
    if (batch.some((b) => persistentID(b) === persistentID(entry))) await commit();
    const found = copies.copyOf(entry);
    if (found) {
      done(entry, found.id, true);
      continue;
    }
    await failingAs([entry], () => walkSnapshot(source, transfer, entry.snapshot.tree, walked, signal), signal);
    batch.push(entry);
    if (transfer.counts.bytesTotal - batchStart >= batchBytes) await commit();
  }
  progress.totalsFinal = true;
  await commit();
  report.flush();
  return result;
}

/** `work`'s failure as a CopyError naming the source snapshots it was for (an abort stays as it is). */
async function failingAs(entries: SnapshotEntry[], work: () => Promise<void>, signal?: AbortSignal): Promise<void> {
  try {
    await work();
  } catch (err) {
    if (signal?.aborted) throw err;
    const names = entries.map((e) => e.id.slice(0, 8)).join(', ');
    throw new CopyError(
      `snapshot${entries.length === 1 ? '' : 's'} ${names} cannot be copied: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** Queues the trees under `root` and their data that the destination lacks, draining the queue as it fills. */
async function walkSnapshot(
  source: Repository,
  transfer: BlobTransfer,
  root: ID,
  walked: Set<ID>,
  signal?: AbortSignal,
): Promise<void> {
  const stack = [root];
  while (stack.length > 0) {
    signal?.throwIfAborted();
    const id = stack.pop()!;
    if (walked.has(id)) continue;
    walked.add(id);
    // held to restic's invariants; data blobs are looked up below, in either repository
    const nodes = await source.loadTree(id, signal, false);
    transfer.want('tree', id);
    for (const node of nodes) {
      if (node.subtree) stack.push(node.subtree);
      for (const blob of node.content ?? []) {
        if (!transfer.want('data', blob)) {
          throw new Error(
            `tree ${id}: entry ${JSON.stringify(displayName(node.name))} references data blob ${blob}, which neither repository holds`,
          );
        }
      }
    }
    await transfer.drainIfFull(signal);
  }
}

/** Calls `fn` at most every `everyMs` from `tick`, and once more from `flush`. */
function throttle(fn: () => void, everyMs = 250): { tick: () => void; flush: () => void } {
  let last = 0;
  return {
    tick() {
      const now = Date.now();
      if (now - last < everyMs) return;
      last = now;
      fn();
    },
    flush: fn,
  };
}
