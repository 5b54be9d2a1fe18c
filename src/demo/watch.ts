// Follows a DataUpload or DataDownload until it ends, showing what `kubectl get` would: the phase, the bytes moved
// (status.progress, which the transfer step writes every few seconds) and the rate between two readings. On a
// terminal the line is redrawn in place; otherwise a line is printed at each change of phase and every few seconds.
import type { Kube, KubeObject } from '../../test/cluster/kube.ts';
import { formatBytes } from '../cli/output.ts';

const terminal = ['Completed', 'Failed', 'Canceled'];
const pollMs = 500;
const plainEveryMs = 3000;

export interface Watched {
  final: KubeObject;
  /** the percentages status.progress showed while the data moved */
  percents: number[];
  /** seconds from creation to the end */
  seconds: number;
}

export interface WatchOptions {
  timeoutMs: number;
  out?: NodeJS.WriteStream;
}

function line(label: string, obj: KubeObject, rate: number | undefined, elapsedMs: number): string {
  const phase: string = obj.status?.phase ?? 'New';
  const p = obj.status?.progress;
  const bytes = p && p.totalBytes > 0 ? ` ${formatBytes(p.bytesDone)} / ${formatBytes(p.totalBytes)} (${p.percent ?? '?'}%)` : '';
  const speed = rate !== undefined && rate > 0 ? ` ${formatBytes(rate)}/s` : '';
  return `  ${label} [${Math.round(elapsedMs / 1000)}s] ${phase.padEnd(10)}${bytes}${speed}`;
}

export async function watchResource(kube: Kube, path: string, label: string, opts: WatchOptions): Promise<Watched> {
  const out = opts.out ?? process.stdout;
  const tty = out.isTTY === true;
  const started = Date.now();
  const percents: number[] = [];
  let previous: { at: number; bytes: number } | undefined;
  let rate: number | undefined;
  let shown = { phase: '', at: 0 };
  for (;;) {
    const obj = await kube.get(path);
    const now = Date.now();
    const phase: string = obj.status?.phase ?? 'New';
    const bytes: number = obj.status?.progress?.bytesDone ?? 0;
    if (phase === 'InProgress' && typeof obj.status?.progress?.percent === 'number' && percents.at(-1) !== obj.status.progress.percent) percents.push(obj.status.progress.percent);
    if (previous && bytes > previous.bytes) rate = ((bytes - previous.bytes) / (now - previous.at)) * 1000;
    if (!previous || bytes !== previous.bytes) previous = { at: now, bytes };
    const text = line(label, obj, phase === 'InProgress' ? rate : undefined, now - started);
    if (tty) out.write(`\r\x1b[2K${text}`);
    else if (phase !== shown.phase || now - shown.at >= plainEveryMs) {
      out.write(`${text}\n`);
      shown = { phase, at: now };
    }
    if (terminal.includes(phase)) {
      if (tty) out.write('\n');
      const seconds = (Date.parse(obj.status?.completionTimestamp ?? new Date(now).toISOString()) - Date.parse(obj.metadata.creationTimestamp)) / 1000;
      return { final: obj, percents, seconds };
    }
    if (now - started > opts.timeoutMs) {
      throw new Error(`${label} did not finish within ${opts.timeoutMs / 60_000} minutes; it is in phase ${phase}: ${obj.status?.message ?? 'no message'}.`);
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
