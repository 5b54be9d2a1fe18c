// The data path allocates a few short-lived megabyte buffers per chunk (compressed, sealed, read-back copies).
// V8 frees such off-heap memory only when a collection runs, and a thread whose JS heap stays small collects
// rarely, so without help the process keeps hundreds of megabytes of garbage. Collecting after every few tens of
// megabytes processed keeps peak memory flat for a few milliseconds of CPU.
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { PerformanceObserver } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as (options?: { type: 'minor' | 'major' }) => void;

const everyBytes = 32 << 20;
let since = 0;

export function allocated(bytes: number): void {
  since += bytes;
  if (since >= everyBytes) {
    since = 0;
    // the buffers die young, so a scavenge frees them; a full collection would cost far more
    gc({ type: 'minor' });
  }
}

/** where the main thread's young generation stops growing: 8 MiB measured 25 MiB less peak RSS than 16, for 0.2 s CPU */
const youngCap = 8 << 20;
let capping = false;

/**
 * Stops the main thread's young generation from growing past `youngCap`. V8 doubles it whenever the bytes that
 * survived scavenges since the last growth exceed its size, so a long backup (files in flight and the tree nodes of
 * open folders survive a few) ends at its 64 MiB maximum: a quarter of the peak RSS of a backup of tiny files.
 * The maximum is a start-up flag, out of reach here, but the growth factor is read at each growth: once the young
 * generation reaches the cap, the factor becomes 1 for the rest of the process. Worker threads have their own limit.
 */
export function capYoungGeneration(): void {
  if (!isMainThread || capping) return;
  capping = true;
  const observer = new PerformanceObserver(() => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (young === undefined || young.space_size < youngCap) return;
    setFlagsFromString('--semi-space-growth-factor=1');
    observer.disconnect();
  });
  observer.observe({ entryTypes: ['gc'] });
}
