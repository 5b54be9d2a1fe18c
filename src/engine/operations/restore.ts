// A restore, under a shared lock: restores and backups run side by side, but no prune repacks or deletes the packs
// it reads, and no forget removes its snapshot, from finding the snapshot to the last byte written. The snapshot is
// found and the index loaded only once the lock is held, so neither can be older than the last prune. `ferry repo
// restore` and the transfer step both restore through here; they differ only in the target they name.
import { BackupPool } from '../backup/pool.ts';
import { formatPolynomial } from '../chunker/polynomial.ts';
import type { ProgressFn } from '../concurrency/progress.ts';
import type { Repository } from '../repository/repository.ts';
import { listSnapshots } from '../repository/snapshots.ts';
import { openOnWorkers } from '../restore/open-blobs.ts';
import { restoreTree } from '../restore/restorer.ts';
import { restoreStream, streamNode } from '../restore/stream.ts';
import { selectSnapshot, type SnapshotEntry } from '../snapshot/select.ts';
import { underLock, type LockingOptions } from './locked.ts';

export type RestoreTarget =
  /** a directory (created if missing) that receives the snapshot's tree, or the part of it at `subpath` */
  | { kind: 'directory'; path: string; subpath?: string; xattrs?: boolean }
  /** a volume's root, which becomes the snapshot's one backed-up directory: its contents and its own owner, mode, times */
  | { kind: 'volume'; path: string }
  /**
   * a device or image file the snapshot's single stream (a block volume's backup) is written onto; its zero ranges
   * are written too unless `zeroed` says the device reads as zeros already
   */
  | { kind: 'device'; path: string; zeroed?: boolean };

/** What a restore is about to write, shown to its caller before anything is written. */
export interface RestoreFound {
  entry: SnapshotEntry;
  /** for a device target: the bytes the stream holds */
  streamSize?: bigint;
}

export interface RestoreOptions extends LockingOptions {
  /** a snapshot id, a unique prefix of one, or "latest" */
  snapshot: string;
  target: RestoreTarget;
  onProgress?: ProgressFn;
  /** called under the lock once the snapshot is found, before anything is written; a throw stops the restore */
  beforeWrite?: (found: RestoreFound) => void | Promise<void>;
  /** threads that decrypt and verify blobs (default none: this thread; src/engine/restore/restorer.ts says why) */
  workers?: number;
}

export interface RestoreResult {
  snapshot: SnapshotEntry;
  filesDone: number;
  bytesDone: number;
}

export function restore(repo: Repository, opts: RestoreOptions): Promise<RestoreResult> {
  return underLock(repo, false, opts, async (signal) => {
    const [snapshots] = await Promise.all([listSnapshots(repo, signal), repo.loadIndex(signal)]);
    const entry = selectSnapshot(snapshots, opts.snapshot);
    const t = opts.target;
    if (t.kind === 'device') {
      const node = await streamNode(repo, entry.snapshot.tree, signal);
      await opts.beforeWrite?.({ entry, streamSize: node.size });
      const p = await restoreStream(repo, entry.snapshot.tree, t.path, {
        signal,
        onProgress: opts.onProgress,
        zeroed: t.zeroed,
      });
      return { snapshot: entry, filesDone: p.filesDone, bytesDone: p.bytesDone };
    }
    await opts.beforeWrite?.({ entry });
    const volume = t.kind === 'volume';
    // a volume's snapshot holds the one folder it was backed up from (its mount path); its contents fill the volume
    const subpath = volume ? (entry.snapshot.paths.length === 1 ? entry.snapshot.paths[0] : '/') : (t.subpath ?? '/');
    const pool = opts.workers
      ? new BackupPool(
          { key: repo.key, polynomial: formatPolynomial(repo.config.chunkerPolynomial), compression: false },
          opts.workers,
        )
      : undefined;
    try {
      const p = await restoreTree(repo, entry.snapshot.tree, {
        target: t.path,
        subpath,
        xattrs: volume ? undefined : t.xattrs,
        rootMetadata: volume,
        signal,
        onProgress: opts.onProgress,
        open: pool && openOnWorkers(pool),
      });
      return { snapshot: entry, filesDone: p.filesDone, bytesDone: p.bytesDone };
    } finally {
      await pool?.close();
    }
  });
}
