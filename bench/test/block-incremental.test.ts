// Issue 34's block incremental in the suite: the volume and its 1% change come from the seed, the ranges handed to
// ferry cover every changed byte as a driver reports them, bytes read are counted for the whole process tree, and
// the verdict holds the tracked incremental to 5% of the full read's time.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseConfig } from '../config.ts';
import { changeImage, planImageChange, trackedBlock, undoChanges } from '../dataset/change.ts';
import { planVolume } from '../dataset/plan.ts';
import { measure, parseIo } from '../measure/child.ts';
import { firstDifference } from '../measure/same-bytes.ts';
import { ferrySummary } from '../peers/ferry.ts';
import {
  blockIncrementalChecks,
  blockIncrementalSection,
  cbtRatio,
  cbtRatioWithoutOpening,
} from '../report/block-incremental.ts';
import { renderMarkdown } from '../report/markdown.ts';
import type { Report } from '../report/markdown.ts';
import { summarize } from '../report/summarize.ts';
import type { OpResult } from '../scenario.ts';

const MiB = 2 ** 20;
const GiB = 1024 * MiB;

test('dataset D: a volume with data across it, random and text, few holes, the same for the same seed', () => {
  const extents = planVolume(1, { size: 2 * GiB, holeFraction: 0.1 });
  assert.deepEqual(planVolume(1, { size: 2 * GiB, holeFraction: 0.1 }), extents);
  assert.notDeepEqual(planVolume(2, { size: 2 * GiB, holeFraction: 0.1 }), extents);
  const data = extents.reduce((n, e) => n + e.length, 0);
  assert.ok(data > 0.85 * 2 * GiB && data < 0.95 * 2 * GiB, `${data} bytes of data`);
  const random = extents.filter((e) => e.content === 'random').reduce((n, e) => n + e.length, 0);
  assert.ok(random > 0.4 * data && random < 0.6 * data);
  // data in every eighth of the volume, not bunched up
  for (let eighth = 0; eighth < 8; eighth++)
    assert.ok(extents.some((e) => Math.floor(e.offset / (GiB / 4)) === eighth));
  for (let i = 1; i < extents.length; i++)
    assert.ok(extents[i].offset >= extents[i - 1].offset + extents[i - 1].length, 'extents sorted, apart');
});

test('the 1% change: a handful of writes apart, 1% in all, reported as whole blocks covering each write', () => {
  const size = 2 * GiB;
  const change = planImageChange(size, 1, 0.01, 5, 1);
  assert.deepEqual(planImageChange(size, 1, 0.01, 5, 1), change, 'deterministic by seed and round');
  assert.notDeepEqual(planImageChange(size, 1, 0.01, 5, 2).writes, change.writes, 'another round, other places');
  assert.equal(change.writes.length, 5);
  const written = change.writes.reduce((n, w) => n + w.length, 0);
  assert.ok(Math.abs(written - 0.01 * size) < 5, `${written} bytes written`);
  for (const [i, w] of change.writes.entries()) {
    const r = change.reported[i];
    assert.ok(r.offset <= w.offset && r.offset + r.length >= w.offset + w.length, 'the report covers the write');
    assert.equal(r.offset % trackedBlock, 0);
    assert.equal(r.length % trackedBlock, 0);
    assert.ok(r.offset + r.length <= size);
    if (i > 0) {
      const before = change.reported[i - 1];
      assert.ok(r.offset > before.offset + before.length, 'sorted, neither overlapping nor touching');
    }
  }
  assert.throws(() => planImageChange(64 * 1024, 1, 0.5, 5, 1), /do not fit apart/);
});

test('the change is written into the image and undone exactly; firstDifference finds where it went', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-cbt-'));
  try {
    const image = join(dir, 'volume.img');
    const copy = join(dir, 'copy.img');
    const original = Buffer.alloc(4 * MiB, 7);
    await writeFile(image, original);
    await writeFile(copy, original);
    const change = planImageChange(original.length, 3, 0.01, 4, 1);
    const changes = await changeImage(image, 3, change, 1);
    assert.equal(await firstDifference(image, copy), change.writes[0].offset);
    await undoChanges(changes);
    assert.equal(await firstDifference(image, copy), undefined);
    assert.deepEqual(await readFile(image), original);
    await writeFile(copy, original.subarray(0, MiB));
    assert.equal(await firstDifference(image, copy), MiB, 'a shorter copy differs at its end');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("bytes read are the whole process tree's: a child's reads count for the command", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'bench-io-'));
  try {
    const file = join(dir, 'data');
    await writeFile(file, Buffer.alloc(3 * MiB, 1));
    // sh runs cat as its child: the reads are the grandchild's of the measured command
    const r = await measure(
      { argv: ['/bin/sh', '-c', 'cat "$0" >/dev/null', file], env: { PATH: '/usr/bin:/bin' }, countReads: true },
      dir,
      60,
    );
    assert.equal(r.exitCode, 0, r.output);
    assert.ok(r.reads!.calls >= 3 * MiB && r.reads!.calls < 4 * MiB, `${r.reads!.calls} bytes`);
    const failed = await measure({ argv: ['/bin/sh', '-c', 'exit 3'], env: {}, countReads: true }, dir, 60);
    assert.equal(failed.exitCode, 3, 'the exit code comes through the counting shell');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('parseIo reads rchar and read_bytes, and refuses a text without them', () => {
  const text = 'rchar: 104868556\nwchar: 5\nsyscr: 819\nsyscw: 800\nread_bytes: 4096\nwrite_bytes: 0\n';
  assert.deepEqual(parseIo(text), { calls: 104868556, storage: 4096 });
  assert.throws(() => parseIo('wchar: 5\n'), /no rchar/);
});

test("ferry's summary is found after warnings, and a run that printed none is an error", () => {
  const doc = { snapshot_id: 'ab', data_blobs: 3, block_read: { mode: 'changed', bytes_read: 5, size: 9 } };
  const printed = `WARN something odd\n${JSON.stringify(doc, null, 2)}\n`;
  assert.deepEqual(ferrySummary(printed), doc);
  assert.throws(() => ferrySummary('ERROR repository locked'), /no backup summary/);
});

const result = (op: OpResult['op'], peer: string, wallSeconds: number, more: Partial<OpResult> = {}): OpResult => ({
  dataset: 'D-test-s1',
  datasetID: 'D',
  op,
  peer,
  target: 'local',
  rep: 1,
  ok: true,
  wallSeconds,
  cpuSeconds: wallSeconds,
  ...more,
});

test('the verdict: the tracked incremental against the full read, both ferry, met at 5% and not above', () => {
  const run = (tracked: number): OpResult[] => [
    result('backup', 'ferry', 30),
    result('block-incremental-full', 'ferry', 20, { bytesRead: 2 * GiB }),
    result('block-incremental-cbt', 'ferry', tracked, { bytesRead: 30 * MiB, deviceBytesRead: 25 * MiB }),
    result('block-incremental-full', 'restic', 40),
  ];
  assert.equal(cbtRatio(summarize(run(1)), 'local'), 0.05);
  const [met] = blockIncrementalChecks(summarize(run(1)));
  assert.equal(met.met, true);
  assert.match(
    met.measured,
    /^5\.0% \(1\.00 s against 20\.00 s, CPU 1\.00 against 20\.00 s; read 25 MiB of the device\)$/,
  );
  assert.equal(blockIncrementalChecks(summarize(run(1.01)))[0].met, false);
  // the tracked run failed: no verdict rather than a false one
  const failed = run(1).map((r) => (r.op === 'block-incremental-cbt' ? { ...r, ok: false } : r));
  assert.equal(blockIncrementalChecks(summarize(failed))[0].met, undefined);
  assert.deepEqual(blockIncrementalChecks(summarize([result('backup', 'ferry', 3, { datasetID: 'A' })])), []);
  const section = blockIncrementalSection(summarize(run(1))).join('\n');
  assert.match(
    section,
    /\| incremental, changed ranges only \| ferry \| 1\.00 \| 1\.00 \| 30 \|  \| 25 \|  \| 5\.0% \|/,
  );
  assert.match(section, /\| incremental, reading the whole volume \| restic \| 40\.00 \| .* \| 200\.0% \|/);
  assert.doesNotMatch(section, /Listing the snapshots/, 'no opening figure, no sentence about it');
  const opened = summarize([...run(1), result('snapshots', 'ferry', 0.5)]);
  assert.equal(cbtRatioWithoutOpening(opened, 'local'), 0.5 / 19.5);
  assert.match(
    blockIncrementalSection(opened).join('\n'),
    /took ferry 0\.50 s; without it .* 2\.6% of the full read's time/,
  );
  assert.equal(cbtRatioWithoutOpening(summarize(run(1)), 'local'), undefined);
});

test('the report carries the verdict with the other targets, and D runs by default', () => {
  const results = [result('block-incremental-full', 'ferry', 10), result('block-incremental-cbt', 'ferry', 2)];
  const report: Report = {
    scale: 'quick',
    started: '2026-11-29T15:00:00Z',
    seconds: 60,
    machine: {
      cpu: 'x',
      cores: 2,
      memoryBytes: GiB,
      kernel: '6',
      disk: 'd',
      node: 'v24',
      loadAtStart: [1, 1, 1],
      versions: {},
    },
    datasets: [],
    reps: 1,
    summaries: summarize(results),
    results,
    kernels: [],
    loadAtEnd: [1, 1, 1],
  };
  const md = renderMarkdown(report, undefined);
  assert.match(
    md,
    /\| local \| D block incremental, 1% changed, through changed-block tracking: <= 5% .* \| 20\.0% .* \| \*\*not met\*\* \|/,
  );
  assert.match(md, /## Block incremental through changed-block tracking/);
  assert.ok(parseConfig([]).datasets.includes('D'));
  assert.deepEqual(parseConfig(['--datasets', 'D']).datasets, ['D']);
  assert.equal(parseConfig(['--quick']).scales.D.size, 512 * MiB);
  assert.equal(parseConfig([]).scales.D.size, 2 * GiB);
});
