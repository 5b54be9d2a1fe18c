// What a backup did, in the words of restic's snapshot summary.

export interface Counters {
  filesNew: number;
  filesChanged: number;
  filesUnmodified: number;
  dirsNew: number;
  dirsChanged: number;
  dirsUnmodified: number;
  totalFiles: number;
  totalBytes: number;
}

export function newCounters(): Counters {
  return { filesNew: 0, filesChanged: 0, filesUnmodified: 0, dirsNew: 0, dirsChanged: 0, dirsUnmodified: 0, totalFiles: 0, totalBytes: 0 };
}
