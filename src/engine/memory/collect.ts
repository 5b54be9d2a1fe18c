// The data path allocates a few short-lived megabyte buffers per chunk (compressed, sealed, read-back copies).
// V8 frees such off-heap memory only when a collection runs, and a thread whose JS heap stays small collects
// rarely, so without help the process keeps hundreds of megabytes of garbage. Collecting after every few tens of
// megabytes processed keeps peak memory flat for little CPU.
//
// node:v8, node:perf_hooks, node:worker_threads and the context that hands out gc() come when first needed: a
// command that reads a few small files of a repository (every repository command imports this) never needs them,
// and loading them cost it about 10 ms of CPU.

type Collect = (options?: { type: 'minor' | 'major' }) => void;
let collector: Collect | undefined;

function gc(options: { type: 'minor' | 'major' }): void {
  if (collector === undefined) {
    process.getBuiltinModule('node:v8').setFlagsFromString('--expose-gc');
    collector = process.getBuiltinModule('node:vm').runInNewContext('gc') as Collect;
  }
  collector(options);
}

const everyBytes = 32 << 20;

/** A counter of bytes that says when another `everyBytes` have gone by. */
function perBytes(): (bytes: number) => boolean {
  let since = 0;
  return (bytes) => {
    since += bytes;
    if (since < everyBytes) return false;
    since = 0;
    return true;
  };
}

const scavengeDue = perBytes();
const fullDue = perBytes();

export function allocated(bytes: number): void {
  // the buffers die young, so a scavenge frees them; a full collection would cost far more
  if (scavengeDue(bytes)) gc({ type: 'minor' });
}

/**
 * Frees large garbage that lived long enough to reach the old generation, such as a document and its text after a
 * parse that allocated throughout (and so promoted them): V8 would leave them until its next full collection. As
 * with `allocated`, once per `everyBytes`, so a repository of a thousand small index files does not pay a full
 * collection for each.
 */
export function outlived(bytes: number): void {
  if (fullDue(bytes)) gc({ type: 'major' });
}

/**
 * Where the main thread's young generation stops growing. A backup: 8 MiB keeps its peak lower than 16, for little
 * CPU. A restore: 32 MiB, since its main thread decides its time and what survives its scavenges (the files in
 * flight) is the same however often they come: a restore of A scavenged 465 times at 8 MiB (1.35 s of that thread)
 * and 157 times at 32 (0.52 s), at the same peak (bench/README.md, 2026-11-30).
 */
export const youngCap = { backup: 8 << 20, restore: 32 << 20 };
/**
 * How far past the bytes that survived a full collection the old generation may grow before the next one. V8 picks
 * a factor of 1.1-4 from how fast it collects against how fast the program allocates; a walk of a million tiny files
 * allocates fast, so it got the high end, and a backup of tiny files peaked far higher than at 10%, for the same CPU
 * time.
 */
const oldGrowthPercent = 10;
let capping = false;

/**
 * Keeps the main thread's heap near what it holds alive. The old generation grows by `oldGrowthPercent` after each
 * full collection instead of V8's dynamic factor. The young generation stops at `cap` (`youngCap`): V8 doubles it whenever
 * the bytes that survived scavenges since the last growth exceed its size, so a long backup (files in flight and the
 * tree nodes of open folders survive a few) ends at its 64 MiB maximum, a large part of the peak of a backup of tiny
 * files. That maximum is a start-up flag, out of reach here, but the growth factor is read at each growth: once the
 * young generation reaches the cap, the factor becomes 1 for the rest of the process. Both flags are read when a
 * collection sizes the heap, so setting them while running takes effect; worker threads have their own limits.
 */
export function capHeapGrowth(cap: number): void {
  if (!process.getBuiltinModule('node:worker_threads').isMainThread || capping) return;
  capping = true;
  const { getHeapSpaceStatistics, setFlagsFromString } = process.getBuiltinModule('node:v8');
  setFlagsFromString(`--heap-growing-percent=${oldGrowthPercent}`);
  const observer = new (process.getBuiltinModule('node:perf_hooks').PerformanceObserver)(() => {
    const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
    if (young === undefined || young.space_size < cap) return;
    setFlagsFromString('--semi-space-growth-factor=1');
    observer.disconnect();
  });
  observer.observe({ entryTypes: ['gc'] });
}
