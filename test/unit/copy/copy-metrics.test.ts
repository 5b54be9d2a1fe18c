// DataCopies in the dispatcher's /metrics: counted by phase and destination at scrape time, retries visible.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CopyMetrics, copyMetricLines } from '../../../src/dispatcher/copy-metrics.ts';
import { DispatcherMetrics } from '../../../src/dispatcher/metrics.ts';
import type { DataCopy, DataCopyStatus } from '../../../src/shared/api/copy.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';

function copy(name: string, location: string, status?: DataCopyStatus): DataCopy {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataCopy',
    metadata: { name, namespace: 'app' },
    spec: { dataUpload: 'db-1', backupStorageLocation: location },
    status,
  };
}

function sample(lines: string[], series: string): number | undefined {
  const line = lines.find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('copies are counted by phase and destination, every phase present, retries apart', () => {
  const lines = copyMetricLines([
    copy('a', 'site-b', { phase: 'Completed' }),
    copy('b', 'site-b', { phase: 'Completed' }),
    copy('c', 'site-b'),
    copy('d', 'site-b', { phase: 'InProgress', attempts: 3, nextAttemptTime: '2025-01-01T00:00:00Z' }),
    copy('e', 'site-"c"', { phase: 'InProgress', attempts: 1 }),
  ]);
  assert.equal(sample(lines, 'ferry_datacopies{phase="Completed",location="site-b"}'), 2);
  assert.equal(sample(lines, 'ferry_datacopies{phase="New",location="site-b"}'), 1);
  assert.equal(sample(lines, 'ferry_datacopies{phase="Failed",location="site-b"}'), 0);
  assert.equal(sample(lines, 'ferry_datacopies_retrying{location="site-b"}'), 1);
  // a running first attempt is not a retry; a quote in a name is escaped
  assert.equal(sample(lines, 'ferry_datacopies{phase="InProgress",location="site-\\"c\\""}'), 1);
  assert.equal(sample(lines, 'ferry_datacopies_retrying{location="site-\\"c\\""}'), 0);
  assert.ok(lines.includes('# TYPE ferry_datacopies gauge'));
  assert.ok(lines.includes('# TYPE ferry_datacopies_retrying gauge'));
});

test('the dispatcher serves the DataCopy gauges read at scrape time, and counts a failed list', async () => {
  const kube = new MemoryKube();
  kube.seed(copy('a', 'site-b', { phase: 'Failed' }) as unknown as KubeObject);
  let ms = 0;
  const metrics = new DispatcherMetrics({ copies: new CopyMetrics(kube, { ttlMs: 1000, now: () => ms }) });
  assert.match(await metrics.render(), /^ferry_datacopies\{phase="Failed",location="site-b"\} 1$/m);
  ms += 2000;
  kube.failNext('list', 'DataCopy', new Error('apiserver away'));
  const text = await metrics.render();
  assert.match(text, /^ferry_datacopies\{phase="Failed",location="site-b"\} 1$/m);
  assert.match(text, /^ferry_datacopy_list_errors_total 1$/m);
});
