// What commands print: JSON for scripts, short human lines otherwise, and a live progress line on a terminal.
import type { Progress } from '../engine/operations/backup.ts';

export function printJSON(value: unknown): void {
  process.stdout.write(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n');
}

export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${units[u]}`;
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/**
 * What a progress line shows: bytes (and files, when counted) against totals that may still be growing, and the
 * worker's own whole percentage when it reports one (a transfer step keeps it below 100 while its scanner is only a
 * little ahead of the upload, when done/total would already read 100%).
 */
export type ProgressFigures = Pick<Progress, 'bytesDone' | 'bytesTotal' | 'totalsFinal'> & {
  filesDone?: number;
  percent?: number;
};

export interface ProgressView {
  /** bytes per second; default: the average since the start; null: not measured yet, so no rate and no ETA */
  rate?: number | null;
  /** the work is over (ended in any phase): no ETA */
  ended?: boolean;
  /** the stage the work is in (a resource's phase), shown first */
  phase?: string;
  /** draw a bar of the done fraction (on a terminal) */
  bar?: boolean;
}

const barWidth = 24;

// rounded down, so a full bar means done (99% is not)
function bar(fraction: number): string {
  const full = Math.floor(Math.min(1, Math.max(0, fraction)) * barWidth);
  return `[${'#'.repeat(full)}${'.'.repeat(barWidth - full)}]`;
}

/** One line describing progress: phase, files, bytes, a bar, rate, and an estimate once totals are known. */
export function progressLine(p: Readonly<ProgressFigures>, elapsedMs: number, view: ProgressView = {}): string {
  const rate = view.rate === undefined ? (elapsedMs > 0 ? (p.bytesDone / elapsedMs) * 1000 : 0) : view.rate;
  const fraction =
    p.percent !== undefined ? p.percent / 100 : p.bytesTotal > 0 ? Math.min(1, p.bytesDone / p.bytesTotal) : 0;
  const eta =
    !view.ended && p.totalsFinal && rate !== null && rate > 0 && p.bytesTotal > p.bytesDone
      ? `, ETA ${formatDuration(((p.bytesTotal - p.bytesDone) / rate) * 1000)}`
      : '';
  const percent = p.percent !== undefined ? `${p.percent}%` : `${(fraction * 100).toFixed(1)}%`;
  const total = p.bytesTotal > 0 ? ` / ${formatBytes(p.bytesTotal)} (${percent})` : '';
  const files = p.filesDone === undefined ? '' : `${p.filesDone} files, `;
  const phase = view.phase ? `${view.phase} ` : '';
  const drawn = view.bar ? `${bar(fraction)} ` : '';
  const speed = rate === null ? '' : `, ${formatBytes(rate)}/s`;
  return `[${formatDuration(elapsedMs)}] ${phase}${drawn}${files}${formatBytes(p.bytesDone)}${total}${speed}${eta}`;
}

/** Bytes per second over the last few seconds, so a watch that starts late does not count what came before. */
function recentRate(): (bytes: number, now: number) => number | undefined {
  const windowMs = 15_000;
  const samples: { at: number; bytes: number }[] = [];
  return (bytes, now) => {
    // nothing moved yet, or bytes going down (the work started over): measure from here
    if (samples.length > 0 && (bytes === 0 || bytes < samples[samples.length - 1].bytes)) samples.length = 0;
    samples.push({ at: now, bytes });
    while (samples.length > 2 && now - samples[1].at >= windowMs) samples.shift();
    const first = samples[0];
    return now > first.at ? ((bytes - first.bytes) / (now - first.at)) * 1000 : undefined;
  };
}

export interface ProgressReporter {
  /**
   * `phase` names the stage, for work that goes through several (a backup's phases); `ended`: that phase is the
   * last, so the line estimates nothing
   */
  update(p: Readonly<ProgressFigures>, phase?: string, ended?: boolean): void;
  done(): void;
}

/**
 * Progress for a long operation: a line with a bar redrawn in place on a terminal; otherwise a plain line every few
 * seconds and at each change of phase; nothing with --json (stdout is for the result).
 */
export function progressReporter(json: boolean, stream: NodeJS.WriteStream = process.stderr): ProgressReporter {
  const start = Date.now();
  const tty = stream.isTTY === true;
  const rateOf = recentRate();
  let lastPlain = 0;
  let last: { p: Readonly<ProgressFigures>; phase?: string; rate: number | null; ended: boolean } | undefined;
  const line = (now: number) =>
    progressLine(last!.p, now - start, { phase: last!.phase, rate: last!.rate, ended: last!.ended, bar: tty });
  // a terminal that reports no width (`script`, some CI terminals) says 0
  const width = stream.columns > 0 ? stream.columns : 80;
  return {
    update(p, phase, ended = false) {
      const now = Date.now();
      const phaseChanged = last !== undefined && last.phase !== phase;
      // a watch that starts late sees bytes moved before it: a rate needs two samples of its own
      last = { p: { ...p }, phase, rate: rateOf(p.bytesDone, now) ?? null, ended };
      if (json) return;
      if (tty) {
        // a line wider than the terminal wraps, and the carriage return would then redraw only its last row
        stream.write(`\r\x1b[2K${line(now).slice(0, Math.max(20, width - 1))}`);
      } else if (now - lastPlain >= 5000 || phaseChanged) {
        lastPlain = now;
        // straight to the stream: a consola reporter (the basic one under CI) would prefix every line with its type
        stream.write(`${line(now)}\n`);
      }
    },
    done() {
      if (json) return;
      if (tty) stream.write('\n');
      else if (last) stream.write(`${line(Date.now())}\n`);
    },
  };
}
