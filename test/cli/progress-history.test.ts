// The pieces of `--wait` and `describe` that need no cluster: the progress line with phase and bar, the progress
// reporter on a terminal and off it, and the phase history derived from step records.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { progressLine, progressReporter } from '../../src/cli/output.ts';
import { phaseHistory } from '../../src/cli/kube/history.ts';
import type { Resource } from '../../src/cli/kube/kinds.ts';
import { uploadWith } from '../support/cli-upload.ts';

test('a progress line shows the phase, a bar of the done fraction, bytes, rate and ETA', () => {
  const line = progressLine({ bytesDone: 32 * 1024 * 1024, bytesTotal: 128 * 1024 * 1024, totalsFinal: true }, 65_000, {
    phase: 'InProgress',
    bar: true,
    rate: 4 * 1024 * 1024,
  });
  assert.equal(line, '[1m05s] InProgress [######..................] 32.0 MiB / 128.0 MiB (25.0%), 4.0 MiB/s, ETA 24s');
  assert.equal(
    progressLine({ bytesDone: 0, bytesTotal: 0, totalsFinal: false, filesDone: 3 }, 2000),
    '[2s] 3 files, 0 B, 0 B/s',
  );
});

test("a progress line shows the worker's own percent, when it reports one, instead of done over total", () => {
  // a backup whose scanner is just ahead of the upload: done equals the total so far, the step says 99%
  const ahead = { bytesDone: 64 * 1024 * 1024, bytesTotal: 64 * 1024 * 1024, totalsFinal: true };
  assert.equal(
    progressLine({ ...ahead, percent: 99 }, 10_000, { bar: true, rate: 1024 * 1024 }),
    '[10s] [#######################.] 64.0 MiB / 64.0 MiB (99%), 1.0 MiB/s',
  );
  assert.equal(progressLine(ahead, 10_000, { rate: 1024 * 1024 }), '[10s] 64.0 MiB / 64.0 MiB (100.0%), 1.0 MiB/s');
  // the bar follows the reported percent too
  assert.match(
    progressLine({ bytesDone: 3, bytesTotal: 4, totalsFinal: true, percent: 50 }, 1000, { bar: true }),
    /^\[1s\] \[#{12}\.{12}\] 3 B \/ 4 B \(50%\)/,
  );
});

function fakeStream(tty: boolean): PassThrough & { isTTY: boolean; text(): string } {
  const s = Object.assign(new PassThrough(), { isTTY: tty });
  let out = '';
  s.on('data', (b: Buffer) => {
    out += b.toString();
  });
  return Object.assign(s, { text: () => out });
}

/** A reporter on a terminal `columns` wide, on a clock the test moves (a rate needs two samples apart in time). */
function terminalReporter(t: TestContext, columns: number) {
  t.mock.timers.enable({ apis: ['Date'], now: 1_000_000 });
  const s = Object.assign(fakeStream(true), { columns });
  return { s, r: progressReporter(false, s as unknown as NodeJS.WriteStream) };
}

test('on a terminal the reporter redraws one line with a bar in place, and ends it', (t) => {
  const { s, r } = terminalReporter(t, 120);
  r.update({ bytesDone: 0, bytesTotal: 0, totalsFinal: false }, 'New');
  t.mock.timers.tick(1000);
  r.update({ bytesDone: 1024, bytesTotal: 4096, totalsFinal: true }, 'InProgress');
  r.done();
  const redraws = s.text().split('\r\x1b[2K').filter(Boolean);
  assert.equal(redraws.length, 2);
  assert.equal(redraws[0], '[0s] New [........................] 0 B');
  assert.equal(redraws[1], '[1s] InProgress [######..................] 1.0 KiB / 4.0 KiB (25.0%), 1.0 KiB/s, ETA 3s\n');
});

test('on a narrow terminal the line is cut to its width, so redrawing in place still works', () => {
  const s = Object.assign(fakeStream(true), { columns: 40 });
  const r = progressReporter(false, s as unknown as NodeJS.WriteStream);
  r.update({ bytesDone: 1024, bytesTotal: 4096, totalsFinal: true }, 'InProgress');
  const drawn = s.text().split('\r\x1b[2K')[1];
  assert.equal(drawn.length, 39);
  assert.ok(drawn.startsWith('[0s] InProgress [######'));
});

test('a watch that starts late shows no rate or ETA until it has two samples of its own, and none once ended', (t) => {
  const { s, r } = terminalReporter(t, 200);
  const MiB = 1024 * 1024;
  // 697 MiB were moved before the watch began: not 136 GiB/s
  r.update({ bytesDone: 697 * MiB, bytesTotal: 1536 * MiB, totalsFinal: true }, 'InProgress');
  t.mock.timers.tick(2000);
  r.update({ bytesDone: 717 * MiB, bytesTotal: 1536 * MiB, totalsFinal: true }, 'InProgress');
  t.mock.timers.tick(1000);
  r.update({ bytesDone: 720 * MiB, bytesTotal: 1536 * MiB, totalsFinal: true }, 'Canceled', true);
  r.done();
  const [first, second, last] = s.text().split('\r\x1b[2K').filter(Boolean);
  assert.equal(first, '[0s] InProgress [##########..............] 697.0 MiB / 1.5 GiB (45.4%)');
  assert.equal(second, '[2s] InProgress [###########.............] 717.0 MiB / 1.5 GiB (46.7%), 10.0 MiB/s, ETA 1m22s');
  assert.equal(last, '[3s] Canceled [###########.............] 720.0 MiB / 1.5 GiB (46.9%), 7.7 MiB/s\n');
});

test('a terminal that reports 0 columns gets a line cut at 80, with bytes, percent and rate', (t) => {
  const { s, r } = terminalReporter(t, 0);
  r.update({ bytesDone: 0, bytesTotal: 4096, totalsFinal: true }, 'Accepted');
  t.mock.timers.tick(3000);
  r.update({ bytesDone: 3072, bytesTotal: 4096, totalsFinal: true }, 'InProgress');
  const drawn = s.text().split('\r\x1b[2K')[2];
  assert.equal(drawn, '[3s] InProgress [##################......] 3.0 KiB / 4.0 KiB (75.0%), 1.0 KiB/s');
  assert.equal(drawn.length, 79);
});

test('off a terminal the reporter writes plain lines, with no reporter prefix, at each phase change and at the end', () => {
  const s = fakeStream(false);
  const r = progressReporter(false, s as unknown as NodeJS.WriteStream);
  r.update({ bytesDone: 0, bytesTotal: 0, totalsFinal: false }, 'New');
  r.update({ bytesDone: 1024, bytesTotal: 4096, totalsFinal: true }, 'InProgress');
  r.update({ bytesDone: 2048, bytesTotal: 4096, totalsFinal: true }, 'InProgress');
  r.done();
  const lines = s.text().split('\n');
  assert.equal(lines.pop(), '');
  assert.equal(lines.length, 3, s.text());
  assert.equal(lines[0], '[0s] New 0 B');
  assert.match(lines[1], /^\[0s\] InProgress 1\.0 KiB \/ 4\.0 KiB \(25\.0%\)/);
  assert.match(lines[2], /^\[0s\] InProgress 2\.0 KiB \/ 4\.0 KiB \(50\.0%\)/);
  assert.ok(!s.text().includes('\r'), 'no redraws off a terminal');
});

test('quiet (a document goes to stdout) the reporter writes nothing', () => {
  const s = fakeStream(true);
  const r = progressReporter(true, s as unknown as NodeJS.WriteStream);
  r.update({ bytesDone: 1, bytesTotal: 2, totalsFinal: true }, 'InProgress');
  r.done();
  assert.equal(s.text(), '');
});

function resource(status: Record<string, unknown>): Resource {
  return uploadWith(status, { creationTimestamp: '2026-01-01T00:00:00Z' });
}

test('phase history follows the step records, with the transfer start as InProgress', () => {
  const r = resource({
    phase: 'Completed',
    steps: {
      snapshot: {
        attempts: 1,
        startTime: '2026-01-01T00:00:01Z',
        endTime: '2026-01-01T00:00:05Z',
        outcome: 'Succeeded',
        message: 'ready',
      },
      expose: { attempts: 2, startTime: '2026-01-01T00:00:06Z', endTime: '2026-01-01T00:00:09Z', outcome: 'Succeeded' },
      transfer: {
        attempts: 1,
        startTime: '2026-01-01T00:00:10Z',
        endTime: '2026-01-01T00:00:30Z',
        outcome: 'Succeeded',
      },
      finalize: {
        attempts: 1,
        startTime: '2026-01-01T00:00:31Z',
        endTime: '2026-01-01T00:00:33Z',
        outcome: 'Succeeded',
      },
    },
  });
  assert.deepEqual(
    phaseHistory(r).map((h) => [h.time.slice(17), h.phase, h.step ?? '', h.attempts ?? 0]),
    [
      ['00Z', 'New', '', 0],
      ['05Z', 'Accepted', 'snapshot', 1],
      ['09Z', 'Prepared', 'expose', 2],
      ['10Z', 'InProgress', 'transfer', 1],
      ['30Z', 'Finalizing', 'transfer', 1],
      ['33Z', 'Completed', 'finalize', 1],
    ],
  );
});

test('phase history ends with phases no step wrote: Canceling from the dispatcher, a failure given up', () => {
  const canceling = phaseHistory(
    resource({ phase: 'Canceling', message: 'Canceling from phase New: spec.cancel is set.' }),
  );
  assert.deepEqual(
    canceling.map((h) => h.phase),
    ['New', 'Canceling'],
  );
  assert.equal(canceling[1].note, 'Canceling from phase New: spec.cancel is set.');
  const failed = phaseHistory(
    resource({
      phase: 'Failed',
      completionTimestamp: '2026-01-01T00:01:00Z',
      steps: {
        snapshot: {
          attempts: 1,
          startTime: '2026-01-01T00:00:01Z',
          endTime: '2026-01-01T00:00:04Z',
          outcome: 'Failed',
          message: 'not ready',
        },
      },
    }),
  );
  assert.deepEqual(
    failed.map((h) => [h.phase, h.time]),
    [
      ['New', '2026-01-01T00:00:00Z'],
      ['Failing', '2026-01-01T00:00:04Z'],
      ['Failed', '2026-01-01T00:01:00Z'],
    ],
  );
});
