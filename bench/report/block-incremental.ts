// Issue 34's block incremental in the report: dataset D backed up, 1% of it changed, then backed up again reading
// only the changed ranges (ferry given them, as changed-block tracking reports them) and reading it whole (every
// peer); the verdict holds the tracked incremental's time against the full read's, both ferry's, same run.
import type { Check } from './markdown.ts';
import { findSummary, type Summary } from './summarize.ts';
import { judge, mib, num as secs } from './format.ts';

/** the tracked incremental may take at most this fraction of a full read's time */
export const cbtTarget = 0.05;

const find = (summaries: Summary[], target: string, op: string, peer: string): Summary | undefined =>
  findSummary(summaries, target, 'D', op, peer);

/** The tracked incremental's time over the full read's, on `target`, or undefined if either is missing. */
export function cbtRatio(summaries: Summary[], target: string): number | undefined {
  const tracked = find(summaries, target, 'block-incremental-cbt', 'ferry')?.wallSeconds;
  const whole = find(summaries, target, 'block-incremental-full', 'ferry')?.wallSeconds;
  return tracked === undefined || !whole ? undefined : tracked / whole;
}

/**
 * The same ratio with what every command pays first (start-up, key derivation: listing the snapshots) taken out of
 * both sides: how close the tracked incremental's own work comes to the target.
 */
export function cbtRatioWithoutOpening(summaries: Summary[], target: string): number | undefined {
  const opening = find(summaries, target, 'snapshots', 'ferry')?.wallSeconds;
  const tracked = find(summaries, target, 'block-incremental-cbt', 'ferry')?.wallSeconds;
  const whole = find(summaries, target, 'block-incremental-full', 'ferry')?.wallSeconds;
  if (opening === undefined || tracked === undefined || whole === undefined || whole <= opening) return undefined;
  return Math.max(0, tracked - opening) / (whole - opening);
}

/** Issue 34's target on each storage target that ran dataset D. */
export function blockIncrementalChecks(summaries: Summary[]): Check[] {
  const targets = [...new Set(summaries.filter((s) => s.datasetID === 'D').map((s) => s.target))];
  return targets.map((t) => {
    const ratio = cbtRatio(summaries, t);
    const tracked = find(summaries, t, 'block-incremental-cbt', 'ferry');
    const whole = find(summaries, t, 'block-incremental-full', 'ferry');
    return {
      target: t,
      goal: `D block incremental, 1% changed, through changed-block tracking: <= ${cbtTarget * 100}% of a full read's time`,
      measured:
        ratio === undefined
          ? '-'
          : `${(ratio * 100).toFixed(1)}% (${secs(tracked?.wallSeconds)} s against ${secs(whole?.wallSeconds)} s, ` +
            `CPU ${secs(tracked?.cpuSeconds)} against ${secs(whole?.cpuSeconds)} s; read ${mib(tracked?.deviceBytesRead)} MiB of the device)`,
      met: judge(ratio, (v) => v <= cbtTarget),
    };
  });
}

const ops: [string, string][] = [
  ['backup', 'full backup'],
  ['block-incremental-full', 'incremental, reading the whole volume'],
  ['block-incremental-cbt', 'incremental, changed ranges only'],
];

/** One target's table: each peer's backups of D with what they read, against ferry's full read's time. */
export function blockIncrementalTable(summaries: Summary[], target: string): string {
  const whole = find(summaries, target, 'block-incremental-full', 'ferry')?.wallSeconds;
  const lines: string[] = [];
  for (const [op, title] of ops) {
    for (const peer of ['ferry', 'restic', 'kopia']) {
      const s = find(summaries, target, op, peer);
      if (!s) continue;
      const failed = s.failed > 0 ? ` (${s.failed}/${s.runs} failed)` : '';
      const share = whole && s.wallSeconds !== undefined ? `${((s.wallSeconds / whole) * 100).toFixed(1)}%` : '';
      lines.push(
        `| ${title} | ${peer}${failed} | ${secs(s.wallSeconds)} | ${secs(s.cpuSeconds)} | ${mib(s.bytesRead)} | ` +
          `${mib(s.storageBytesRead)} | ${mib(s.deviceBytesRead)} | ${mib(s.storedBytes)} | ${share} |`,
      );
    }
  }
  if (lines.length === 0) return '';
  return [
    `| operation | peer | time s | CPU s | read calls MiB | from storage MiB | device read MiB | stored MiB | time / ferry's full read |`,
    `|---|---|--:|--:|--:|--:|--:|--:|--:|`,
    ...lines,
  ].join('\n');
}

/** The report's section on D, or nothing when D did not run. */
export function blockIncrementalSection(summaries: Summary[]): string[] {
  const targets = [...new Set(summaries.filter((s) => s.datasetID === 'D').map((s) => s.target))];
  if (targets.length === 0) return [];
  return [
    '## Block incremental through changed-block tracking (issue 34)',
    '',
    "Dataset D is backed up whole, then 1% of it is overwritten in a handful of places. ferry backs it up again given the changed ranges a driver would report (4 KiB blocks, `ferry repo backup --stream --changed-ranges`), then every peer backs it up reading it whole. The tracked backup runs first, so it stores the changed data itself; ferry's full read after it must then add no data blob (the same content as a full read), and the tracked snapshot is restored and compared byte for byte. Read calls are the process tree's rchar (page cache, pipes and sockets included: restic's image comes through `cat` and a pipe, so it counts at least twice); from storage is read_bytes (the page cache is warm); device read is ferry's own count of the image's bytes it read.",
    '',
    ...targets.flatMap((t) => {
      const opening = find(summaries, t, 'snapshots', 'ferry')?.wallSeconds;
      const without = cbtRatioWithoutOpening(summaries, t);
      const note =
        opening === undefined || without === undefined
          ? []
          : [
              `Listing the snapshots (start-up and opening the repository) took ferry ${secs(opening)} s; without it on both sides the tracked incremental took ${(without * 100).toFixed(1)}% of the full read's time.`,
              '',
            ];
      return [`${t}:`, '', blockIncrementalTable(summaries, t), '', ...note];
    }),
  ];
}
