// DataCopies as Prometheus gauges, read from their status at scrape time (./listed-metrics.ts): how many are in each
// phase per destination location, and how many failed their last attempt and wait for the next, so a copy that
// keeps failing shows before anyone needs it.
import type { CopyPhase, DataCopy } from '../shared/api/copy.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import { Gauge } from './metrics.ts';
import { ListedMetrics, type ListedMetricsOptions } from './listed-metrics.ts';
import { isRetrying } from './copy-policy-status.ts';

const phases: readonly CopyPhase[] = ['New', 'InProgress', 'Completed', 'Failed', 'Canceled'];

/** Every phase of every destination seen has a sample (0 included), so an alert on one never lacks its series. */
export function copyMetricLines(copies: readonly DataCopy[]): string[] {
  const byPhase = new Gauge(
    'ferry_datacopies',
    'DataCopies by phase and destination location (spec.backupStorageLocation); a copy without status is New.',
  );
  const retrying = new Gauge(
    'ferry_datacopies_retrying',
    'DataCopies whose last attempt failed and that wait for their next one, by destination location.',
  );
  const locations = [...new Set(copies.map((c) => c.spec.backupStorageLocation))].sort();
  for (const location of locations) {
    const here = copies.filter((c) => c.spec.backupStorageLocation === location);
    for (const phase of phases)
      byPhase.set({ phase, location }, here.filter((c) => (c.status?.phase ?? 'New') === phase).length);
    retrying.set({ location }, here.filter(isRetrying).length);
  }
  return [byPhase, retrying].flatMap((g) => g.render());
}

/** The DataCopy gauges, listed at most once per ttlMs. */
export class CopyMetrics extends ListedMetrics<DataCopy & KubeObject> {
  constructor(kube: Kube, opts: ListedMetricsOptions = {}) {
    super(kube, { kind: 'DataCopy', errorsMetric: 'ferry_datacopy_list_errors_total', lines: copyMetricLines }, opts);
  }
}
