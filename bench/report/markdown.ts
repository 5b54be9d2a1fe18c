// The markdown report of a run: machine, datasets, issue 7's targets checked, then one table per storage target.
import type { KernelResult } from '../kernels.ts';
import type { Machine } from './machine.ts';
import { findSummary as find, type Summary } from './summarize.ts';
import type { OpResult } from '../scenario.ts';
import { blockIncrementalChecks, blockIncrementalSection } from './block-incremental.ts';
import { restoreChecks } from './restore-targets.ts';
import { judge, mbps, MiB, mib, num, times } from './format.ts';

export interface Report {
  scale: string;
  started: string;
  seconds: number;
  machine: Machine;
  datasets: { name: string; describe: string; bytes: number; files: number }[];
  reps: number;
  summaries: Summary[];
  results: OpResult[];
  kernels: KernelResult[];
  loadAtEnd: number[];
}

const opTitles: Record<string, string> = {
  backup: 'backup (full)',
  'backup-unchanged': 'backup, nothing changed',
  'backup-1pct-changed': 'backup, 1% of files changed',
  snapshots: 'list snapshots',
  restore: 'restore into an empty folder',
  'block-incremental-full': 'backup, 1% of the volume changed, read whole',
  'block-incremental-cbt': 'backup, 1% of the volume changed, changed ranges only',
};

function resultsTable(summaries: Summary[], target: string): string {
  const rows = summaries.filter((s) => s.target === target);
  if (rows.length === 0) return '';
  const peerOrder = ['ferry', 'restic', 'kopia'];
  rows.sort(
    (a, b) =>
      a.dataset.localeCompare(b.dataset) ||
      Object.keys(opTitles).indexOf(a.op) - Object.keys(opTitles).indexOf(b.op) ||
      peerOrder.indexOf(a.peer) - peerOrder.indexOf(b.peer),
  );
  const lines = [
    `| dataset | operation | peer | time s | MB/s | CPU s | peak RSS MiB | stored MiB | S3 requests | peer time / ferry time |`,
    `|---|---|---|--:|--:|--:|--:|--:|--:|--:|`,
  ];
  for (const s of rows) {
    const failed = s.failed > 0 ? ` (${s.failed}/${s.runs} failed)` : '';
    lines.push(
      `| ${s.datasetID} | ${opTitles[s.op] ?? s.op} | ${s.peer}${failed} | ${num(s.wallSeconds)} | ${mbps(s.throughput)} | ` +
        `${num(s.cpuSeconds)} | ${mib(s.maxRssBytes)} | ${mib(s.storedBytes)} | ${s.s3Requests === undefined ? '' : Math.round(s.s3Requests)} | ${num(s.ferrySpeedup)} |`,
    );
  }
  return lines.join('\n');
}

export interface Check {
  target: string;
  goal: string;
  measured: string;
  met: boolean | undefined;
}

/** Issue 7's targets, each judged from the medians (undefined: not measured in this run). */
export function checkTargets(summaries: Summary[], imageDataBytes: number | undefined): Check[] {
  const checks: Check[] = [];
  const targets = [...new Set(summaries.map((s) => s.target))];
  const speedup = (t: string, d: string, op: string, peer: string): number | undefined =>
    find(summaries, t, d, op, peer)?.ferrySpeedup;
  for (const t of targets) {
    const r = speedup(t, 'A', 'backup', 'restic');
    const k = speedup(t, 'A', 'backup', 'kopia');
    checks.push({
      target: t,
      goal: 'A full backup: >= 1.5x restic throughput',
      measured: times(r),
      met: judge(r, (v) => v >= 1.5),
    });
    checks.push({
      target: t,
      goal: 'A full backup: faster than kopia',
      measured: times(k),
      met: judge(k, (v) => v > 1),
    });
    const u = speedup(t, 'A', 'backup-unchanged', 'restic');
    checks.push({
      target: t,
      goal: 'A unchanged incremental: <= half of restic time',
      measured: times(u),
      met: judge(u, (v) => v >= 2),
    });
    const c = speedup(t, 'A', 'backup-1pct-changed', 'restic');
    checks.push({
      target: t,
      goal: 'A 1% changed incremental: <= restic time',
      measured: times(c),
      met: judge(c, (v) => v >= 1),
    });
    const rs = speedup(t, 'A', 'restore', 'restic');
    checks.push({
      target: t,
      goal: 'A restore: >= 1.5x restic throughput',
      measured: times(rs),
      met: judge(rs, (v) => v >= 1.5),
    });
    for (const op of ['backup', 'restore']) {
      const f = find(summaries, t, 'B', op, 'ferry');
      // only the peers that ran
      const peers = ['restic', 'kopia'].flatMap((p) => {
        const rss = find(summaries, t, 'B', op, p)?.maxRssBytes;
        return rss === undefined ? [] : [`${p} ${mib(rss)}`];
      });
      checks.push({
        target: t,
        goal: `B ${op}: peak RSS < 256 MiB`,
        measured:
          f?.maxRssBytes === undefined
            ? '-'
            : `${mib(f.maxRssBytes)} MiB${peers.length > 0 ? ` (${peers.join(', ')})` : ''}`,
        met: judge(f?.maxRssBytes, (v) => v < 256 * MiB),
      });
    }
    const cb = find(summaries, t, 'C', 'backup', 'ferry');
    if (imageDataBytes !== undefined) {
      checks.push({
        target: t,
        goal: 'C backup: holes not uploaded (stored <= data extents)',
        measured: `${mib(cb?.storedBytes)} MiB stored for ${mib(imageDataBytes)} MiB data, ${num(cb?.cpuSeconds)} CPU s`,
        met: judge(cb?.storedBytes, (v) => v <= imageDataBytes * 1.05),
      });
      const cr = find(summaries, t, 'C', 'restore', 'ferry');
      checks.push({
        target: t,
        goal: 'C restore: image sparse again (allocated <= data extents)',
        measured: `${mib(cr?.restoredAllocated)} MiB allocated`,
        met: judge(cr?.restoredAllocated, (v) => v <= imageDataBytes * 1.05),
      });
    }
  }
  return checks;
}

/**
 * What opening a repository costs each peer (listing its snapshots), and the incremental ratios against restic
 * with that cost taken out of both: how much of an incremental lead is the work itself rather than start-up and key
 * derivation (restic calibrates its key to about half a second when it creates the repository).
 */
export function openingCosts(summaries: Summary[]): string[] {
  const lines: string[] = [];
  for (const t of [...new Set(summaries.map((s) => s.target))]) {
    const open = (peer: string): number | undefined => find(summaries, t, 'A', 'snapshots', peer)?.wallSeconds;
    const [ferry, restic] = [open('ferry'), open('restic')];
    if (ferry === undefined) continue;
    const peers = ['ferry', 'restic', 'kopia'].flatMap((p) =>
      open(p) === undefined ? [] : [`${p} ${num(open(p))} s`],
    );
    let line = `- ${t}: listing the snapshots took ${peers.join(', ')}.`;
    if (restic !== undefined) {
      const without = (op: string): string => {
        const f = find(summaries, t, 'A', op, 'ferry')?.wallSeconds;
        const r = find(summaries, t, 'A', op, 'restic')?.wallSeconds;
        return f === undefined || r === undefined ? '-' : times((r - restic) / (f - ferry));
      };
      line += ` Without it, restic time / ferry time: nothing changed ${without('backup-unchanged')}, 1% changed ${without('backup-1pct-changed')}.`;
    }
    lines.push(line);
  }
  return lines;
}

/** Which S3 calls each operation made on MinIO: where a request count comes from. */
function requestBreakdown(summaries: Summary[]): string {
  const rows = summaries.filter((s) => s.s3ByName && Object.keys(s.s3ByName).length > 0);
  if (rows.length === 0) return '';
  return rows
    .map((s) => {
      const calls = Object.entries(s.s3ByName!)
        .sort((a, b) => b[1] - a[1])
        .map(([name, n]) => `${name} ${n}`)
        .join(', ');
      return `- ${s.datasetID} ${opTitles[s.op] ?? s.op}, ${s.peer}: ${calls}`;
    })
    .join('\n');
}

function kernelsTable(kernels: KernelResult[]): string {
  if (kernels.length === 0) return '';
  const lines = ['| kernel (one core) | MB/s | note |', '|---|--:|---|'];
  for (const k of kernels) lines.push(`| ${k.name} | ${mbps(k.bytesPerSecond)} | ${k.note ?? ''} |`);
  return lines.join('\n');
}

/** Where the run's restores wrote, for the method paragraph. */
export function restoresWentTo(results: OpResult[]): string {
  const kinds = new Set(results.flatMap((x) => (x.restoredOn === undefined ? [] : [x.restoredOn])));
  if (kinds.size === 0) return '';
  if (kinds.size > 1)
    return 'Restores went to fresh filesystems for some repetitions and to a folder for others (see the JSON). ';
  return kinds.has('fresh ext4')
    ? 'Each restore wrote to a fresh ext4 filesystem of its own (a loop-mounted image sized for the data: a quarter ' +
        'more than it and a block per file, plus 256 MiB, in whole GiB), as into a new volume made for it. '
    : 'Restores wrote to a folder of the work filesystem (no root or loop device here), so each paid for the files the previous one left. ';
}

/** A paragraph and its list, or nothing when the list is empty. */
function withHeading(heading: string, lines: string[]): string[] {
  return lines.length === 0 ? [] : [heading, '', ...lines, ''];
}

export function renderMarkdown(r: Report, imageDataBytes: number | undefined): string {
  const m = r.machine;
  const checks = [
    ...checkTargets(r.summaries, imageDataBytes),
    ...restoreChecks(r.summaries),
    ...blockIncrementalChecks(r.summaries),
  ];
  const verdict = (c: Check): string => (c.met === undefined ? 'not measured' : c.met ? 'met' : '**not met**');
  const failures = r.results.filter((x) => !x.ok);
  return [
    `# ferry benchmark (${r.scale}), ${r.started}`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB memory, Linux ${m.kernel}, disk ${m.disk}. ` +
      `Load average at start ${m.loadAtStart.join(' / ')}, at end ${r.loadAtEnd.join(' / ')} (the machine is shared: a high load skews every figure, ratios less so).`,
    '',
    `Versions: ${Object.entries(m.versions)
      .map(([k, v]) => `${k}: ${v}`)
      .join('; ')}.`,
    '',
    "Datasets (generated from the seed, read whole into the page cache before each target's repetitions):",
    ...r.datasets.map((d) => `- ${d.name}: ${d.describe}`),
    '',
    `Method: every tool runs as its own process under GNU time (wall, user+sys CPU, peak RSS of the process tree); ` +
      `each repetition runs ferry, then each peer, on a fresh repository (fresh MinIO bucket), ${r.reps} repetitions, medians shown. ` +
      `Stored = repository size after the operation; S3 requests from MinIO's per-bucket metrics. ${restoresWentTo(r.results)}` +
      (m.pageReporting ? `Memory: ${m.pageReporting}. ` : '') +
      `Run took ${(r.seconds / 60).toFixed(1)} min.`,
    '',
    '## Targets of issues 7 and 34',
    '',
    '| target | goal | measured (peer time / ferry time, or figure) | verdict |',
    '|---|---|---|---|',
    ...checks.map((c) => `| ${c.target} | ${c.goal} | ${c.measured} | ${verdict(c)} |`),
    '',
    ...withHeading(
      'Every command first starts and opens the repository (start-up, key derivation); listing the snapshots measures that, and the ratios here leave it out of both sides:',
      openingCosts(r.summaries),
    ),
    ...blockIncrementalSection(r.summaries),
    '## Local filesystem repository',
    '',
    resultsTable(r.summaries, 'local'),
    '',
    '## MinIO on 127.0.0.1',
    '',
    resultsTable(r.summaries, 'minio'),
    '',
    'S3 calls behind the request counts:',
    '',
    requestBreakdown(r.summaries),
    '',
    '## Physical limits on this machine',
    '',
    kernelsTable(r.kernels),
    '',
    ...(failures.length === 0
      ? []
      : [
          '## Failures',
          '',
          ...failures.map(
            (f) =>
              `- ${f.dataset} ${f.target} rep ${f.rep} ${f.peer} ${f.op}: ${(f.error ?? '').replace(/\s+/g, ' ').slice(0, 400)}`,
          ),
          '',
        ]),
  ].join('\n');
}
