// When batches of small files are worth another worker thread. Each costs tens of megabytes, so one starts only
// while the workers are the limit and the machine has a core for it.
import type { ThreadCpu } from './worker-protocol.ts';

export interface GrowthRule {
  /** every worker ran on a CPU for more than this share of the time since the last look */
  busyAbove: number;
  /** and the cores left over by the workers and the main thread together are at least this many */
  spareAtLeast: number;
}

/**
 * Files of a few KiB keep one worker nearly always busy while the main thread has time to spare, and a second worker
 * makes the backup faster; files of 100 bytes keep the walking main thread busier than the worker, so a second worker
 * only adds memory. From a cold page cache every thread waits for the disk. Measurements: bench/README.md.
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
