// The datasets are what every figure is measured on: they must be the same for the same seed, have the sizes the
// issue asks for, and the 1% change must be undone exactly.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { zstdCompressSync } from 'node:zlib';
import { changeFiles, undoChanges } from '../dataset/change.ts';
import { randomBytes, textBytes } from '../dataset/content.ts';
import { ensureDataset } from '../dataset/datasets.ts';
import type { DatasetScales } from '../dataset/datasets.ts';
import { planImage, planMixed, planTiny } from '../dataset/plan.ts';
import { countTree } from '../measure/stored.ts';

const MiB = 2 ** 20;
const scales: DatasetScales = {
  A: { randomBytes: 3 * MiB, randomFileMax: 2 * MiB, textBytes: MiB, textFileMax: 256 * 1024, smallFiles: 200 },
  B: { files: 300 },
  C: { size: 32 * MiB, dataFraction: 0.25 },
  D: { size: 16 * MiB, holeFraction: 0.1 },
  E: { size: 20 * MiB + 5 },
};

test('content is a function of (seed, label): same bytes again, different for another label or seed', () => {
  assert.deepEqual(textBytes(1, 'a', 5000), textBytes(1, 'a', 5000));
  assert.notDeepEqual(textBytes(1, 'a', 5000), textBytes(1, 'b', 5000));
  assert.notDeepEqual(randomBytes(1, 'a', 64), randomBytes(2, 'a', 64));
  assert.equal(textBytes(3, 'x', 12345).length, 12345);
});

test('text compresses like logs do and random data does not', () => {
  const text = textBytes(1, 't', MiB);
  const random = randomBytes(1, 'r', MiB);
  assert.ok(zstdCompressSync(text).length < text.length / 2.5);
  assert.ok(zstdCompressSync(random).length > random.length * 0.99);
});

test('dataset A plan: the requested byte totals, small files of 1-16 KiB in a tree at least 7 deep at full scale', () => {
  const full = planMixed(1, {
    randomBytes: 1024 * MiB,
    randomFileMax: 64 * MiB,
    textBytes: 512 * MiB,
    textFileMax: 16 * MiB,
    smallFiles: 100_000,
  });
  const sum = (c: string): number =>
    full.filter((f) => f.content === c && !f.path.startsWith('small/')).reduce((n, f) => n + f.size, 0);
  assert.equal(sum('random'), 1024 * MiB);
  assert.equal(sum('text'), 512 * MiB);
  const small = full.filter((f) => f.path.startsWith('small/'));
  assert.equal(small.length, 100_000);
  assert.ok(small.every((f) => f.size >= 1024 && f.size <= 16 * 1024));
  assert.ok(small.every((f) => f.path.split('/').length >= 9));
  assert.equal(new Set(full.map((f) => f.path)).size, full.length);
});

test('dataset B plan: a million 100-byte files, 1000 to a folder', () => {
  const plan = planTiny(1_000_000);
  assert.equal(plan.length, 1_000_000);
  assert.ok(plan.every((f) => f.size === 100));
  const folders = new Map<string, number>();
  for (const f of plan)
    folders.set(
      f.path.slice(0, f.path.lastIndexOf('/')),
      (folders.get(f.path.slice(0, f.path.lastIndexOf('/'))) ?? 0) + 1,
    );
  assert.equal(folders.size, 1000);
});

test('dataset C plan: a quarter of the image in non-overlapping extents', () => {
  const extents = planImage(1, { size: 4096 * MiB, dataFraction: 0.25 });
  assert.equal(
    extents.reduce((n, e) => n + e.length, 0),
    1024 * MiB,
  );
  for (let i = 1; i < extents.length; i++)
    assert.ok(extents[i].offset > extents[i - 1].offset + extents[i - 1].length - 1);
});

async function digest(root: string, paths: string[]): Promise<string> {
  const h = createHash('sha256');
  for (const p of paths) h.update(await readFile(join(root, p)));
  return h.digest('hex');
}

test('generated datasets match their plans, are reused from the cache, and the 1% change is undone exactly', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-bench-test-'));
  try {
    const logs: string[] = [];
    const a = await ensureDataset('A', 'test', 5, scales, dir, (m) => logs.push(m));
    const counted = await countTree(a.path);
    assert.deepEqual([counted.files, counted.bytes], [a.files, a.bytes]);
    const paths = a.plan.map((f) => f.path);
    const before = await digest(a.path, paths);
    const changes = await changeFiles(a, 5, 0.01, 1);
    assert.equal(changes.length, Math.round(a.files * 0.01));
    assert.notEqual(await digest(a.path, paths), before);
    await undoChanges(changes);
    assert.equal(await digest(a.path, paths), before);
    const generated = logs.length;
    await ensureDataset('A', 'test', 5, scales, dir, (m) => logs.push(m));
    assert.equal(logs.length, generated, 'a complete dataset is reused, not generated again');
    const c = await ensureDataset('C', 'test', 5, scales, dir, () => {});
    const image = await countTree(dir);
    assert.ok(image.bytes >= c.bytes);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('dataset E is one incompressible file of the size asked, the same bytes for the same seed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-bench-test-'));
  try {
    const e = await ensureDataset('E', 'test', 5, scales, dir, () => {});
    const counted = await countTree(e.path);
    assert.deepEqual([counted.files, counted.bytes, e.files, e.bytes], [1, 20 * MiB + 5, 1, 20 * MiB + 5]);
    const bytes = await readFile(join(e.path, e.plan[0].path));
    assert.ok(zstdCompressSync(bytes).length > bytes.length * 0.99, 'incompressible');
    // its 16 MiB pieces differ, so nothing in the file deduplicates against the rest of it
    assert.notDeepEqual(bytes.subarray(0, MiB), bytes.subarray(16 * MiB, 17 * MiB));
    const again = await ensureDataset('E', 'again', 5, scales, dir, () => {});
    assert.deepEqual(await readFile(join(again.path, again.plan[0].path)), bytes);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
