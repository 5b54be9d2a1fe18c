// One backup run, under the shared lock src/engine/operations/backup.ts holds: load the index (adopting packs an
// interrupted run left behind), archive, flush packs and index, and only then write the snapshot, so a run killed at
// any point leaves no snapshot and nothing a check calls an error.
import { hostname as osHostname, userInfo } from 'node:os';
import type { ID } from '../ids/id.ts';
import type { Repository } from '../repository/repository.ts';
import { adoptUnindexedPacks, listPacks, type AdoptResult } from '../repository/adopt.ts';
import { saveSnapshot } from '../repository/snapshots.ts';
import { newSnapshot, type Snapshot } from '../snapshot/snapshot.ts';
import type { SnapshotEntry } from '../snapshot/select.ts';
import { localTime } from '../tree/gotime.ts';
import type { PackWriterOptions, WriterStats } from '../repository/pack-writer.ts';
import type { BlockChanges } from '../blocks/plan.ts';
import { Archiver, type ArchiveOptions, type ArchiveResult } from './archiver.ts';

export const programVersion = 'ferry 0.1.0';

export interface BackupOptions extends Omit<ArchiveOptions, 'parentTree'> {
  /** absolute paths of directories or files; for `stream`, the device or image file to read */
  paths: string[];
  /** back up `paths[0]` as one file named `stream.name` at the snapshot root (block volumes, images, pipes) */
  stream?: {
    name: string;
    size?: number;
    /** a block device's changed-block tracking, asked once the parent is known (it may answer relative to it) */
    changes?: (parent: SnapshotEntry | undefined) => Promise<BlockChanges>;
  };
  /** given as a promise, finding it (listing snapshots under the lock) overlaps the index load */
  parent?: SnapshotEntry | Promise<SnapshotEntry | undefined>;
  tags?: string[];
  hostname?: string;
  writer?: PackWriterOptions;
  /** called with the lock and index ready, before any data moves (a checkpoint for callers reporting phases) */
  onStart?: (adopted: AdoptResult) => void;
}

export interface BackupResult {
  snapshotID: ID;
  snapshot: Snapshot;
  stats: WriterStats;
  adopted: AdoptResult;
  archive: ArchiveResult;
}

/** The backup itself; its caller holds a shared lock on the repository. */
export async function backupLocked(repo: Repository, opts: BackupOptions): Promise<BackupResult> {
  const start = localTime(BigInt(Date.now()) * 1_000_000n);
  // the pack listing (one request, or a folder scan) runs beside the index load rather than after it
  const stored = listPacks(repo, opts.signal);
  stored.catch(() => undefined);
  await repo.loadIndex(opts.signal);
  const adopted = await adoptUnindexedPacks(repo, opts.signal, stored);
  const parent = await opts.parent;
  opts.onStart?.(adopted);
  // a writer per run, so its counters describe this run alone
  const writer = repo.writer(opts.writer);
  const archiver = new Archiver(repo, writer, { ...opts, parentTree: parent?.snapshot.tree });
  const archive = opts.stream
    ? await archiver.archiveStream(
        opts.paths[0],
        opts.stream.name,
        opts.stream.size,
        opts.stream.changes && { changes: await opts.stream.changes(parent), parentID: parent?.id },
      )
    : await archiver.archive(opts.paths);
  await writer.flush(opts.signal);
  opts.signal?.throwIfAborted();
  const snapshot = newSnapshot(archive.tree, start, {
    parent: parent?.id ?? null,
    paths: opts.stream ? [`/${opts.stream.name}`] : [...opts.paths].sort(),
    hostname: opts.hostname ?? osHostname(),
    username: currentUser(),
    uid: process.getuid?.() ?? 0,
    gid: process.getgid?.() ?? 0,
    tags: opts.tags ?? [],
    programVersion,
    summary: {
      backupStart: start,
      backupEnd: localTime(BigInt(Date.now()) * 1_000_000n),
      ...archive.counters,
      dataBlobs: writer.stats.dataBlobs,
      treeBlobs: writer.stats.treeBlobs,
      dataAdded: writer.stats.dataAdded,
      dataAddedPacked: writer.stats.dataAddedPacked,
    },
  });
  const snapshotID = await saveSnapshot(repo, snapshot, opts.signal);
  return { snapshotID, snapshot, stats: writer.stats, adopted, archive };
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return '';
  }
}
