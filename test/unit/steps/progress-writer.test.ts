// status.progress as the transfer writes it: every write carries the whole percentage the Progress% printer column
// shows, from the first write to the finished transfer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { DataUpload, Progress } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { finishedProgress, ProgressWriter, progressOf } from '../../../src/steps/data/progress-writer.ts';
import { dataUpload, harness } from './harness.ts';

test('progressOf: the whole percentage, rounded down, with the total raised to the bytes done', () => {
  const cases: [number, number, Progress][] = [
    [0, 0, { bytesDone: 0, totalBytes: 0, percent: 0 }],
    [0, 1000, { bytesDone: 0, totalBytes: 1000, percent: 0 }],
    [999, 1000, { bytesDone: 999, totalBytes: 1000, percent: 99 }],
    [1000, 1000, { bytesDone: 1000, totalBytes: 1000, percent: 100 }],
    [1500, 1000, { bytesDone: 1500, totalBytes: 1500, percent: 100 }],
    [1, 3, { bytesDone: 1, totalBytes: 3, percent: 33 }],
  ];
  for (const [done, total, want] of cases) assert.deepEqual(progressOf(done, total), want, `${done} of ${total}`);
  assert.deepEqual(finishedProgress(0), { bytesDone: 0, totalBytes: 0, percent: 100 });
});

test('progressOf: while the total still grows the percentage stays below 100', () => {
  assert.deepEqual(progressOf(1000, 1000, false), { bytesDone: 1000, totalBytes: 1000, percent: 99 });
  assert.deepEqual(progressOf(1000, 800, false), { bytesDone: 1000, totalBytes: 1000, percent: 99 });
  assert.deepEqual(progressOf(500, 1000, false), { bytesDone: 500, totalBytes: 1000, percent: 50 });
  assert.deepEqual(progressOf(1000, 1000, true), { bytesDone: 1000, totalBytes: 1000, percent: 100 });
});

test('progressOf: percent stays within 0..100 and below 100 until every byte is done', () => {
  fc.assert(
    fc.property(fc.nat(2 ** 40), fc.nat(2 ** 40), (done, total) => {
      const p = progressOf(done, total);
      assert.ok(Number.isInteger(p.percent) && p.percent! >= 0 && p.percent! <= 100);
      assert.equal(p.percent === 100, p.totalBytes > 0 && p.bytesDone === p.totalBytes);
    }),
  );
});

test('ProgressWriter: the status patch it writes carries percent', async () => {
  const h = harness('transfer', { progressMs: 5 });
  const du = dataUpload({}, { phase: 'InProgress' });
  h.kube.seed(du);
  const written: Progress[] = [];
  h.kube.on('patch', 'DataUpload', (o) => {
    written.push(structuredClone((o.status as { progress: Progress }).progress));
  });
  const writer = new ProgressWriter(h.ctx, du as DataUpload & KubeObject);
  writer.update(250, 1000);
  writer.start();
  await new Promise((r) => setTimeout(r, 60));
  await writer.stop();
  assert.deepEqual(written, [{ bytesDone: 250, totalBytes: 1000, percent: 25 }]);
  assert.deepEqual(
    h.kube.peek<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: 'app', name: 'du-1' })?.status?.progress,
    { bytesDone: 250, totalBytes: 1000, percent: 25 },
  );
});
