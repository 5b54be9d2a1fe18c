// Medians over the repetitions of each (dataset, operation, target, peer), and ferry's ratios against each peer.
import type { OpResult } from '../scenario.ts';

export interface Summary {
  dataset: string;
  datasetID: string;
  op: string;
  target: string;
  peer: string;
  runs: number;
  failed: number;
  wallSeconds?: number;
  throughput?: number;
  cpuSeconds?: number;
  maxRssBytes?: number;
  storedBytes?: number;
  s3Requests?: number;
  restoredAllocated?: number;
  bytesRead?: number;
  storageBytesRead?: number;
  deviceBytesRead?: number;
  /** S3 requests per call, from the repetition closest to the median */
  s3ByName?: Record<string, number>;
  /** this peer's median time over ferry's: above 1, ferry is faster */
  ferrySpeedup?: number;
}

export function median(values: number[]): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

type Figure =
  | 'wallSeconds'
  | 'throughput'
  | 'cpuSeconds'
  | 'maxRssBytes'
  | 'storedBytes'
  | 's3Requests'
  | 'restoredAllocated'
  | 'bytesRead'
  | 'storageBytesRead'
  | 'deviceBytesRead';
const figures: Figure[] = [
  'wallSeconds',
  'throughput',
  'cpuSeconds',
  'maxRssBytes',
  'storedBytes',
  's3Requests',
  'restoredAllocated',
  'bytesRead',
  'storageBytesRead',
  'deviceBytesRead',
];

const key = (r: { dataset: string; op: string; target: string; peer: string }): string =>
  `${r.dataset}|${r.op}|${r.target}|${r.peer}`;

/** The summary of one (target, dataset, operation, peer), if it ran. */
export function findSummary(
  summaries: Summary[],
  target: string,
  datasetID: string,
  op: string,
  peer: string,
): Summary | undefined {
  return summaries.find((s) => s.target === target && s.datasetID === datasetID && s.op === op && s.peer === peer);
}

export function summarize(results: OpResult[]): Summary[] {
  const groups = new Map<string, OpResult[]>();
  for (const r of results) {
    const list = groups.get(key(r)) ?? [];
    list.push(r);
    groups.set(key(r), list);
  }
  const summaries: Summary[] = [];
  for (const list of groups.values()) {
    const first = list[0];
    const ok = list.filter((r) => r.ok);
    const s: Summary = {
      dataset: first.dataset,
      datasetID: first.datasetID,
      op: first.op,
      target: first.target,
      peer: first.peer,
      runs: list.length,
      failed: list.length - ok.length,
    };
    for (const f of figures) {
      const m = median(ok.map((r) => r[f]).filter((v): v is number => v !== undefined));
      if (m !== undefined) s[f] = m;
    }
    if (s.s3Requests !== undefined) {
      const closest = ok
        .filter((r) => r.s3ByName)
        .sort((a, b) => Math.abs(a.s3Requests! - s.s3Requests!) - Math.abs(b.s3Requests! - s.s3Requests!))[0];
      s.s3ByName = closest?.s3ByName;
    }
    summaries.push(s);
  }
  const byKey = new Map(summaries.map((s) => [key(s), s]));
  for (const s of summaries) {
    const ferry = byKey.get(key({ ...s, peer: 'ferry' }));
    if (s.peer !== 'ferry' && ferry?.wallSeconds && s.wallSeconds) s.ferrySpeedup = s.wallSeconds / ferry.wallSeconds;
  }
  return summaries;
}
