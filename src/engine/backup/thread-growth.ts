// When batches of small files are worth another worker thread. Each costs 20-40 MiB, so one starts only while the
// workers are the limit and the machine has a core for it.
import type { ThreadCpu } from './worker-protocol.ts';

export interface GrowthRule {
  /** every worker ran on a CPU for more than this share of the time since the last look */
  busyAbove: number;
  /** and the cores left over by the workers and the main thread together are at least this many */
  spareAtLeast: number;
}

/**
 * Measured on two cores, one worker, warm page cache, shares over one-second looks: 100k files of 1-16 KiB kept the
 * worker 0.87-0.94 busy with the main thread at 0.33-0.40, and a second worker took the backup from 8.4 s to 7.0-7.6;
 * a million files of 100 bytes kept the worker at 0.52-0.56 and the main thread, walking, at 0.63-0.68 (the walk is
 * the limit: a second worker added 20-40 MiB to a 229 MiB peak and saved nothing). Cold, both kinds left every
 * thread under 0.5 while they waited for the disk.
 */
export const defaultGrowth: GrowthRule = { busyAbove: 0.8, spareAtLeast: 0.5 };

/** The share of one core a thread used from `from` to `to`. */
export function cpuShare(from: ThreadCpu, to: ThreadCpu): number {
  return (to.usedMs - from.usedMs) / (to.atMs - from.atMs);
}

/** Whether another worker would find a core to run on and work to do. */
export function worthAnotherThread(workers: number[], main: number, cores: number, rule: GrowthRule): boolean {
  if (workers.some((share) => share <= rule.busyAbove)) return false;
  const used = workers.reduce((sum, share) => sum + share, main);
  return cores - used >= rule.spareAtLeast;
}

/** The calling thread's CPU time so far, read now. */
export function threadCpu(): ThreadCpu {
  const { user, system } = process.threadCpuUsage();
  return { usedMs: (user + system) / 1000, atMs: performance.timeOrigin + performance.now() };
}
