// The dispatcher's Prometheus metrics in the text exposition format: admissions, denials, dispatches and admission
// latency. A few counters and one histogram do not need a client library.

type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const parts = Object.entries(labels).map(([k, v]) => `${k}="${v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

class Counter {
  readonly #values = new Map<string, { labels: Labels; value: number }>();
  readonly name: string;
  readonly help: string;

  constructor(name: string, help: string) {
    this.name = name;
    this.help = help;
  }

  inc(labels: Labels, by = 1): void {
    const key = labelText(labels);
    const entry = this.#values.get(key) ?? { labels, value: 0 };
    entry.value += by;
    this.#values.set(key, entry);
  }

  get(labels: Labels): number {
    return this.#values.get(labelText(labels))?.value ?? 0;
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.#values.values()) lines.push(`${this.name}${labelText(labels)} ${value}`);
    return lines;
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
    this.buckets.forEach((le, i) => { if (value <= le) s.counts[i]++; });
    s.sum += value;
    s.count++;
    this.#series.set(key, s);
  }

  render(): string[] {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const s of this.#series.values()) {
      this.buckets.forEach((le, i) => lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: String(le) })} ${s.counts[i]}`));
      lines.push(`${this.name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`);
      lines.push(`${this.name}_sum${labelText(s.labels)} ${s.sum}`, `${this.name}_count${labelText(s.labels)} ${s.count}`);
    }
    return lines;
  }
}

export class DispatcherMetrics {
  readonly admissions = new Counter('ferry_dispatcher_admissions_total', 'Admission requests answered, by kind, operation and whether they were allowed.');
  readonly denials = new Counter('ferry_dispatcher_denials_total', 'Admission requests denied, by kind and reason.');
  readonly dispatches = new Counter('ferry_dispatcher_dispatches_total', 'Step Jobs dispatched, by kind, step and result (created, exists, waiting, failed).');
  readonly latency = new Histogram('ferry_dispatcher_admission_duration_seconds', 'Time to answer an admission request, by kind.',
    [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]);

  render(): string {
    return `${[...this.admissions.render(), ...this.denials.render(), ...this.dispatches.render(), ...this.latency.render()].join('\n')}\n`;
  }
}
