// Threads started before the repository opens. A backup's first worker and a restore's small-file thread take 0.1
// to 0.2 s to start; started ahead, that overlaps the key derivation and the index load instead of delaying the
// first file (bench/README.md). Their modules load here on their own, so a caller can start one before it loads the
// operation itself. The operation that runs next takes the thread over; when none does, a process's end stops it.

/** For a backup: its first worker. A backup that finds nothing new to read never uses it. */
export function startBackupAhead(): void {
  void import('../backup/pool.ts').then((pool) => pool.startWorkerAhead());
}

/** For a restore into `target`: the thread that writes its small files (a device takes one stream, and no such thread). */
export function startRestoreAhead(target: 'directory' | 'volume' | 'device'): void {
  if (target !== 'device') void import('../restore/small-file-writer.ts').then((w) => w.startSmallFileThreadAhead());
}
