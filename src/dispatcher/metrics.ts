// The dispatcher's Prometheus metrics in the text exposition format: admissions, denials, dispatches, admission
// latency, and the transfer queue as the last placement saw it, then BackupSchedule health and DataCopies by phase
// read at scrape time (schedule-metrics.ts, copy-metrics.ts). A few counters, gauges and one histogram do not need a client library. Each replica counts
// what it did; Prometheus sums the replicas.

type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`,
  );
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** Counters and gauges: one number per label set. */
class Series {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge';

  constructor(name: string, help: string, type: 'counter' | 'gauge') {
    this.name = name;
    this.help = help;
    this.type = type;
  }

  protected put(labels: Labels, value: (old: number) => number): void {
    const key = labelText(labels);
    this.#values.set(key, { labels, value: value(this.#values.get(key)?.value ?? 0) });
  }

  get(labels: Labels): number {
    return this.#values.get(labelText(labels))?.value ?? 0;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} ${this.type}`];
    for (const { labels, value } of this.#values.values()) lines.push(`${this.name}${labelText(labels)} ${value}`);
    return lines;
  }
}

export class Counter extends Series {
  constructor(name: string, help: string) {
    super(name, help, 'counter');
  }

  inc(labels: Labels, by = 1): void {
    this.put(labels, (old) => old + by);
  }
}

export class Gauge extends Series {
  constructor(name: string, help: string) {
    super(name, help, 'gauge');
  }

  set(labels: Labels, value: number): void {
    this.put(labels, () => value);
  }
}

class Histogram {
  readonly #series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();
  readonly name: string;
  readonly help: string;
  readonly buckets: readonly number[];

  constructor(name: string, help: string, buckets: readonly number[]) {
    this.name = name;
    this.help = help;
    this.buckets = buckets;
  }

  observe(labels: Labels, value: number): void {
    const key = labelText(labels);
    const s = this.#series.get(key) ?? { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
    this.buckets.forEach((le, i) => {
      if (value <= le) s.counts[i]++;
    });
    s.sum += value;
    s.count++;
    this.#series.set(key, s);
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.#series.values()) {
      this.buckets.forEach((le, i) =>
        lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: String(le) })} ${s.counts[i]}`),
      );
      lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
      lines.push(
        `${this.name}_sum${labelText(s.labels)} ${s.sum}`,
        `${this.name}_count${labelText(s.labels)} ${s.count}`,
      );
    }
    return lines;
  }
}

/** Metric families computed when scraped, already in the text format. */
export interface MetricLines {
  lines(): Promise<string[]>;
}

export class DispatcherMetrics {
  readonly admissions = new Counter(
    'ferry_dispatcher_admissions_total',
    'Admission requests answered, by kind, operation and whether they were allowed.',
  );
  readonly denials = new Counter('ferry_dispatcher_denials_total', 'Admission requests denied, by kind and reason.');
  readonly dispatches = new Counter(
    'ferry_dispatcher_dispatches_total',
    'Step Jobs dispatched, by kind, step and result (created, exists, waiting, failed).',
  );
  readonly latency = new Histogram(
    'ferry_dispatcher_admission_duration_seconds',
    'Time to answer an admission request, by kind.',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  );
  readonly waiting = new Gauge(
    'ferry_dispatcher_waiting_transfers',
    'Resources waiting for a transfer slot under the concurrency limits, as the last placement saw them.',
  );
  readonly transferring = new Gauge(
    'ferry_dispatcher_running_transfers',
    'Transfers holding a slot (running, or started and not yet InProgress), as the last placement saw them.',
  );

  readonly #listed: MetricLines[];

  /**
   * schedules, copies: gauges computed at scrape time (ScheduleMetrics, CopyMetrics); a dispatcher without them
   * reports its own only
   */
  constructor(opts: { schedules?: MetricLines; copies?: MetricLines } = {}) {
    this.#listed = [opts.schedules, opts.copies].filter((m) => m !== undefined);
    // a dispatcher that has placed nothing yet has an empty queue, and says so
    this.waiting.set({}, 0);
    this.transferring.set({}, 0);
  }

  async render(): Promise<string> {
    const all = [this.admissions, this.denials, this.dispatches, this.latency, this.waiting, this.transferring];
    const listed = await Promise.all(this.#listed.map((m) => m.lines()));
    const lines = [...all.flatMap((m) => m.render()), ...listed.flat()];
    return `${lines.join('\n')}\n`;
  }
}
