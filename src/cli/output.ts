// What commands print: JSON for scripts, short human lines otherwise, and a live progress line on a terminal.
import { consola } from 'consola';
import type { Progress } from '../shared/backup/progress.ts';

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

/** One line describing progress: files, bytes, rate, and an estimate once totals are known. */
export function progressLine(p: Readonly<Progress>, elapsedMs: number): string {
  const rate = elapsedMs > 0 ? (p.bytesDone / elapsedMs) * 1000 : 0;
  const pct = p.bytesTotal > 0 ? Math.min(100, (p.bytesDone / p.bytesTotal) * 100) : 0;
  const eta = p.totalsFinal && rate > 0 && p.bytesTotal > p.bytesDone ? `, ETA ${formatDuration(((p.bytesTotal - p.bytesDone) / rate) * 1000)}` : '';
  const total = p.bytesTotal > 0 ? ` / ${formatBytes(p.bytesTotal)} (${pct.toFixed(1)}%)` : '';
  return `[${formatDuration(elapsedMs)}] ${p.filesDone} files, ${formatBytes(p.bytesDone)}${total}, ${formatBytes(rate)}/s${eta}`;
}

/**
 * Progress for a long operation: a line redrawn in place on a terminal, a plain line every few seconds
 * otherwise, nothing with --json (stdout is for the result).
 */
export function progressReporter(json: boolean): { update(p: Readonly<Progress>): void; done(): void } {
  const start = Date.now();
  const tty = process.stderr.isTTY === true;
  let lastPlain = 0;
  let last: Readonly<Progress> | undefined;
  return {
    update(p) {
      last = p;
      if (json) return;
      const line = progressLine(p, Date.now() - start);
      if (tty) {
        process.stderr.write(`\r\x1b[2K${line}`);
      } else if (Date.now() - lastPlain >= 5000) {
        lastPlain = Date.now();
        consola.log(line);
      }
    },
    done() {
      if (json) return;
      if (tty) process.stderr.write('\n');
      else if (last) consola.log(progressLine(last, Date.now() - start));
    },
  };
}
