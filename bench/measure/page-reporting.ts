// Pauses the VM's free page reporting for a run. The machine this suite was built on is a Firecracker VM whose
// balloon reports free memory to the host (blocks of order `page_reporting_order`, 2 MiB, about two seconds after
// they are freed), and the host takes it back. Whatever next writes gigabytes into the page cache then faults each
// page in from the host again, inside its own system calls: a restore of full-size A run after a minute idle took
// 16.6-17.3 s with 9.5-10 s of system time, the same restore right after another one 11-12 s with 4-4.5 s, for
// ferry and restic alike (by hand, 2026-11-26). Which tool paid depended on what ran before it and how long ago, not
// on the tool. An order above the largest free block (MAX_PAGE_ORDER is 10) reports nothing; the old value is put
// back when the run ends. Memory reported before the pause is still the host's, so the free memory is then written
// once, which makes the host back it again: otherwise the first restore of a run paid for it (16.7 s against 13.3
// for the second, restic's 12.0, at 22:16 with reporting paused and nothing written).
import { readFile, writeFile } from 'node:fs/promises';
import { readFileSync, writeFileSync } from 'node:fs';
import { release } from '../../src/engine/memory/release.ts';

export const reportingOrderPath = '/sys/module/page_reporting/parameters/page_reporting_order';
/** larger than any block the buddy allocator holds, so no free block qualifies */
const pausedOrder = 11;

export interface ReportingPause {
  /** for the report: what was done, or why nothing was */
  state: string;
  /** puts the old order back (synchronously: it also runs when the run is interrupted) */
  resume(): void;
}

/** `back` writes the free memory once reporting is paused (tests pass their own: the real one writes gigabytes). */
export async function pausePageReporting(path = reportingOrderPath, back = backFreeMemory): Promise<ReportingPause> {
  const none = (state: string): ReportingPause => ({ state, resume: () => {} });
  let before: string;
  try {
    before = (await readFile(path, 'utf8')).trim();
  } catch {
    return none('no free page reporting on this machine');
  }
  if (!/^\d+$/.test(before)) return none(`free page reporting left on (its order reads "${before}")`);
  try {
    await writeFile(path, String(pausedOrder));
    const now = (await readFile(path, 'utf8')).trim();
    if (now !== String(pausedOrder))
      return none(`free page reporting left on (order ${pausedOrder} was not taken; it reads ${now})`);
  } catch (err) {
    return none(
      `free page reporting left on (${(err as NodeJS.ErrnoException).code ?? String(err)} setting its order)`,
    );
  }
  back();
  let resumed = false;
  return {
    state: `the VM's free page reporting paused for the run (order ${before} -> ${pausedOrder})`,
    resume() {
      if (resumed) return;
      resumed = true;
      writeFileSync(path, before);
    },
  };
}

/** free memory left untouched, for everything else on the machine while the rest is being written */
const margin = 1 << 30;
const chunk = 256 << 20;

/** Writes (nearly) all free memory once, in chunks freed together at the end, so its pages are backed by the host. */
function backFreeMemory(): void {
  const kib = Number(/^MemFree:\s+(\d+) kB/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0);
  const chunks: Buffer[] = [];
  // mmap'd zero pages cost the host nothing until written: fill() is what makes it back them
  for (let left = kib * 1024 - margin; left >= chunk; left -= chunk) chunks.push(Buffer.allocUnsafeSlow(chunk).fill(1));
  for (const c of chunks) release(c);
}
