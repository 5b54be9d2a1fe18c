// What the walk of a backup counts: the file and directory part of restic's snapshot summary.
import type { SnapshotSummary } from '../snapshot/snapshot.ts';

export type Counters = Pick<
  SnapshotSummary,
  | 'filesNew'
  | 'filesChanged'
  | 'filesUnmodified'
  | 'dirsNew'
  | 'dirsChanged'
  | 'dirsUnmodified'
  | 'totalFilesProcessed'
  | 'totalBytesProcessed'
>;

export function newCounters(): Counters {
  return {
    filesNew: 0,
    filesChanged: 0,
    filesUnmodified: 0,
    dirsNew: 0,
    dirsChanged: 0,
    dirsUnmodified: 0,
    totalFilesProcessed: 0,
    totalBytesProcessed: 0,
  };
}
