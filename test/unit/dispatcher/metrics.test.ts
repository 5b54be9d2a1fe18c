// The dispatcher's /metrics text: Prometheus' exposition format, parsed back line by line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DispatcherMetrics } from '../../../src/dispatcher/metrics.ts';

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

test('a fresh dispatcher reports an empty transfer queue and declares every metric type', () => {
  const text = new DispatcherMetrics().render();
  assert.deepEqual([...samples(text)], [['ferry_dispatcher_waiting_transfers', 0], ['ferry_dispatcher_running_transfers', 0]]);
  for (const [name, type] of [['admissions_total', 'counter'], ['denials_total', 'counter'], ['dispatches_total', 'counter'],
    ['admission_duration_seconds', 'histogram'], ['waiting_transfers', 'gauge'], ['running_transfers', 'gauge']]) {
    assert.match(text, new RegExp(`^# TYPE ferry_dispatcher_${name} ${type}$`, 'm'));
  }
});

test('counters add up, gauges are replaced, histograms count into every bucket at or above the value, labels are escaped', () => {
  const m = new DispatcherMetrics();
  m.dispatches.inc({ kind: 'DataUpload', step: 'snapshot', result: 'created' });
  m.dispatches.inc({ kind: 'DataUpload', step: 'snapshot', result: 'created' });
  m.denials.inc({ kind: 'DataUpload', reason: 'say "no"\\' });
  m.waiting.set({}, 5);
  m.waiting.set({}, 3);
  m.latency.observe({ kind: 'DataUpload' }, 0.03);
  const s = samples(m.render());
  assert.equal(s.get('ferry_dispatcher_dispatches_total{kind="DataUpload",step="snapshot",result="created"}'), 2);
  assert.equal(s.get('ferry_dispatcher_denials_total{kind="DataUpload",reason="say \\"no\\"\\\\"}'), 1);
  assert.equal(s.get('ferry_dispatcher_waiting_transfers'), 3);
  assert.equal(s.get('ferry_dispatcher_admission_duration_seconds_bucket{kind="DataUpload",le="0.025"}'), 0);
  assert.equal(s.get('ferry_dispatcher_admission_duration_seconds_bucket{kind="DataUpload",le="0.05"}'), 1);
  assert.equal(s.get('ferry_dispatcher_admission_duration_seconds_bucket{kind="DataUpload",le="+Inf"}'), 1);
  assert.equal(s.get('ferry_dispatcher_admission_duration_seconds_count{kind="DataUpload"}'), 1);
});
