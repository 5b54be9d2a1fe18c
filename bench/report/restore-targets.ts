// Issue 34's restore targets in the report: dataset A's restore against restic and Kopia, and dataset E's one large
// file restored faster than restic with both cores at work. Each is judged from the medians of the same run.
import type { Check } from './markdown.ts';
import { findSummary, type Summary } from './summarize.ts';
import { judge, times as ratio } from './format.ts';

/** A's restore: at least this many times restic's speed, and faster than Kopia */
export const mixedRestoreTarget = 1.3;
/** E's restore: at least this many times restic's speed */
export const largeFileRestoreTarget = 1.5;
/** E's restore uses both cores: ferry's CPU time over its wall time above this (more than one core on average) */
export const coresBusyTarget = 1;

/** Issue 34's restore targets on each storage target that ran dataset A or E. */
export function restoreChecks(summaries: Summary[]): Check[] {
  const checks: Check[] = [];
  for (const t of [...new Set(summaries.map((s) => s.target))]) {
    const speedup = (d: string, peer: string): number | undefined =>
      findSummary(summaries, t, d, 'restore', peer)?.ferrySpeedup;
    if (findSummary(summaries, t, 'A', 'restore', 'ferry')) {
      const r = speedup('A', 'restic');
      const k = speedup('A', 'kopia');
      checks.push(
        {
          target: t,
          goal: `A restore: >= ${mixedRestoreTarget}x restic (issue 34)`,
          measured: ratio(r),
          met: judge(r, (v) => v >= mixedRestoreTarget),
        },
        { target: t, goal: 'A restore: faster than kopia', measured: ratio(k), met: judge(k, (v) => v > 1) },
      );
    }
    const e = findSummary(summaries, t, 'E', 'restore', 'ferry');
    if (e) {
      const r = speedup('E', 'restic');
      checks.push({
        target: t,
        goal: `E restore (one large file): >= ${largeFileRestoreTarget}x restic`,
        measured: ratio(r),
        met: judge(r, (v) => v >= largeFileRestoreTarget),
      });
      const busy = e.cpuSeconds !== undefined && e.wallSeconds ? e.cpuSeconds / e.wallSeconds : undefined;
      const restic = findSummary(summaries, t, 'E', 'restore', 'restic');
      const resticBusy =
        restic?.cpuSeconds !== undefined && restic.wallSeconds ? restic.cpuSeconds / restic.wallSeconds : undefined;
      checks.push({
        target: t,
        goal: `E restore uses both cores: CPU s / wall s > ${coresBusyTarget}`,
        measured:
          busy === undefined
            ? '-'
            : `${busy.toFixed(2)} (${e.cpuSeconds!.toFixed(2)} CPU s in ${e.wallSeconds!.toFixed(2)} s` +
              `${resticBusy === undefined ? '' : `; restic ${resticBusy.toFixed(2)}`})`,
        met: judge(busy, (v) => v > coresBusyTarget),
      });
    }
  }
  return checks;
}
