// The dispatcher's /metrics text: Prometheus' exposition format, parsed back line by line; with the BackupSchedule
// gauges read from status at scrape time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DispatcherMetrics } from '../../../src/dispatcher/metrics.ts';
import { ScheduleMetrics, scheduleMetricLines } from '../../../src/dispatcher/schedule-metrics.ts';
import type { BackupSchedule } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';

function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-z_]+(?:\{.*\})?) (\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    out.set(m[1], Number(m[2]));
  }
  return out;
}

test('a fresh dispatcher reports an empty transfer queue and declares every metric type', async () => {
  const text = await new DispatcherMetrics().render();
  assert.deepEqual(
    [...samples(text)],
    [
      ['ferry_dispatcher_waiting_transfers', 0],
      ['ferry_dispatcher_running_transfers', 0],
    ],
  );
  for (const [name, type] of [
    ['admissions_total', 'counter'],
    ['denials_total', 'counter'],
    ['dispatches_total', 'counter'],
    ['admission_duration_seconds', 'histogram'],
    ['waiting_transfers', 'gauge'],
    ['running_transfers', 'gauge'],
  ]) {
    assert.match(text, new RegExp(`^# TYPE ferry_dispatcher_${name} ${type}$`, 'm'));
  }
});

test('counters add up, gauges are replaced, histograms count into every bucket at or above the value, labels are escaped', async () => {
  const m = new DispatcherMetrics();
  m.dispatches.inc({ kind: 'DataUpload', step: 'snapshot', result: 'created' });
  m.dispatches.inc({ kind: 'DataUpload', step: 'snapshot', result: 'created' });
  m.denials.inc({ kind: 'DataUpload', reason: 'say "no"\\' });
  m.waiting.set({}, 5);
  m.waiting.set({}, 3);
  m.latency.observe({ kind: 'DataUpload' }, 0.03);
  const s = samples(await m.render());
  assert.equal(s.get('ferry_dispatcher_dispatches_total{kind="DataUpload",step="snapshot",result="created"}'), 2);
  assert.equal(s.get('ferry_dispatcher_denials_total{kind="DataUpload",reason="say \\"no\\"\\\\"}'), 1);
  assert.equal(s.get('ferry_dispatcher_waiting_transfers'), 3);
  assert.equal(s.get('ferry_dispatcher_admission_duration_seconds_bucket{kind="DataUpload",le="0.025"}'), 0);
  assert.equal(s.get('ferry_dispatcher_admission_duration_seconds_bucket{kind="DataUpload",le="0.05"}'), 1);
  assert.equal(s.get('ferry_dispatcher_admission_duration_seconds_bucket{kind="DataUpload",le="+Inf"}'), 1);
  assert.equal(s.get('ferry_dispatcher_admission_duration_seconds_count{kind="DataUpload"}'), 1);
});

function schedule(
  namespace: string,
  name: string,
  over: { suspend?: boolean; status?: BackupSchedule['status'] } = {},
): BackupSchedule & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name, namespace },
    spec: {
      schedule: '0 * * * *',
      pvcs: ['data'],
      backupStorageLocation: 'default',
      ...(over.suspend ? { suspend: true } : {}),
    },
    ...(over.status ? { status: over.status } : {}),
  };
}

const nightly = schedule('app', 'nightly', {
  status: {
    missedRuns: 3,
    lastSuccessfulTime: '2026-03-01T10:00:05Z',
    lastRun: { run: '20260301-1100', scheduledTime: '2026-03-01T11:00:00Z', outcome: 'Failed' },
  },
});

test("schedule gauges: missed runs, last success, suspension and the last run's outcome, per schedule", () => {
  const text = scheduleMetricLines([nightly, schedule('app', 'paused', { suspend: true })]).join('\n');
  const s = samples(text);
  const l = (name: string) => `{namespace="app",schedule="${name}"}`;
  assert.equal(s.get(`ferry_schedule_missed_runs${l('nightly')}`), 3);
  assert.equal(s.get(`ferry_schedule_missed_runs${l('paused')}`), 0);
  assert.equal(
    s.get(`ferry_schedule_last_success_timestamp_seconds${l('nightly')}`),
    Date.parse('2026-03-01T10:00:05Z') / 1000,
  );
  assert.equal(
    s.has(`ferry_schedule_last_success_timestamp_seconds${l('paused')}`),
    false,
    'no success yet: no sample',
  );
  assert.equal(s.get(`ferry_schedule_suspended${l('nightly')}`), 0);
  assert.equal(s.get(`ferry_schedule_suspended${l('paused')}`), 1);
  assert.equal(
    s.get(`ferry_schedule_last_run_timestamp_seconds${l('nightly')}`),
    Date.parse('2026-03-01T11:00:00Z') / 1000,
  );
  for (const outcome of ['Running', 'Succeeded', 'Failed', 'Skipped']) {
    assert.equal(
      s.get(`ferry_schedule_last_run_outcome{namespace="app",schedule="nightly",outcome="${outcome}"}`),
      outcome === 'Failed' ? 1 : 0,
    );
    assert.equal(s.get(`ferry_schedule_last_run_outcome{namespace="app",schedule="paused",outcome="${outcome}"}`), 0);
  }
  for (const name of [
    'missed_runs',
    'last_success_timestamp_seconds',
    'suspended',
    'last_run_outcome',
    'last_run_timestamp_seconds',
  ]) {
    assert.match(text, new RegExp(`^# HELP ferry_schedule_${name} \\S.*\n# TYPE ferry_schedule_${name} gauge$`, 'm'));
  }
  const odd = samples(scheduleMetricLines([schedule('a"b\\c', 'x\ny')]).join('\n'));
  assert.equal(
    odd.get('ferry_schedule_suspended{namespace="a\\"b\\\\c",schedule="x\\ny"}'),
    0,
    'label values are escaped',
  );
});

test('one list of the schedules serves every scrape within the cache time, concurrent ones included; then status is read again', async () => {
  const kube = new MemoryKube();
  kube.seed(nightly);
  const clock = { ms: 0 };
  const metrics = new DispatcherMetrics({ schedules: new ScheduleMetrics(kube, { ttlMs: 5000, now: () => clock.ms }) });
  const lists = () => kube.actions.filter((a) => a.verb === 'list' && a.kind === 'BackupSchedule').length;
  const key = 'ferry_schedule_missed_runs{namespace="app",schedule="nightly"}';
  const texts = await Promise.all([metrics.render(), metrics.render(), metrics.render()]);
  assert.equal(lists(), 1);
  for (const text of texts) assert.equal(samples(text).get(key), 3);
  kube.mutate({ kind: 'BackupSchedule', namespace: 'app', name: 'nightly' }, (o) => {
    (o as BackupSchedule & KubeObject).status!.missedRuns = 4;
  });
  clock.ms = 4999;
  assert.equal(samples(await metrics.render()).get(key), 3, 'cached');
  assert.equal(lists(), 1);
  clock.ms = 5000;
  const s = samples(await metrics.render());
  assert.equal(lists(), 2);
  assert.equal(s.get(key), 4);
  assert.equal(s.get('ferry_dispatcher_waiting_transfers'), 0, "the dispatcher's own metrics come first, unchanged");
  assert.equal(s.get('ferry_schedule_list_errors_total'), 0);
});

test('a failed list serves the last values read and counts the error', async () => {
  const kube = new MemoryKube();
  kube.seed(nightly);
  const clock = { ms: 0 };
  const source = new ScheduleMetrics(kube, { ttlMs: 1000, now: () => clock.ms });
  kube.failNext('list', 'BackupSchedule', new Error('the apiserver is away'));
  const first = samples((await source.lines()).join('\n'));
  assert.equal(first.has('ferry_schedule_missed_runs{namespace="app",schedule="nightly"}'), false, 'nothing read yet');
  assert.equal(first.get('ferry_schedule_list_errors_total'), 1);
  assert.equal(
    samples((await source.lines()).join('\n')).get('ferry_schedule_missed_runs{namespace="app",schedule="nightly"}'),
    3,
    'a failure is not cached',
  );
  clock.ms = 1000;
  kube.failNext('list', 'BackupSchedule', new Error('the apiserver is away'));
  const stale = samples((await source.lines()).join('\n'));
  assert.equal(stale.get('ferry_schedule_missed_runs{namespace="app",schedule="nightly"}'), 3);
  assert.equal(stale.get('ferry_schedule_list_errors_total'), 2);
});
