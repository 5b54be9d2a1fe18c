import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepOneCopy, planPrune, type PackUsage } from '../../../src/engine/prune/plan.ts';

const pack = (id: string, usedBytes: number, unusedBytes: number): PackUsage => ({
  id,
  usedBytes,
  unusedBytes,
  usedBlobs: usedBytes > 0 ? 1 : 0,
  unusedBlobs: unusedBytes > 0 ? 1 : 0,
});

test('prune plan: unused packs go, mostly-unused packs are repacked, the rest stay', () => {
  const cases: { name: string; usage: PackUsage[]; remove: string[]; repack: string[]; keep: string[] }[] = [
    { name: 'all used', usage: [pack('a', 100, 0)], remove: [], repack: [], keep: ['a'] },
    { name: 'nothing used', usage: [pack('a', 0, 100)], remove: ['a'], repack: [], keep: [] },
    { name: 'half unused', usage: [pack('a', 50, 50)], remove: [], repack: ['a'], keep: [] },
    { name: 'little unused', usage: [pack('a', 90, 10)], remove: [], repack: [], keep: ['a'] },
    {
      name: 'mixed',
      usage: [pack('a', 0, 5), pack('b', 1, 99), pack('c', 99, 1)],
      remove: ['a'],
      repack: ['b'],
      keep: ['c'],
    },
  ];
  for (const c of cases) {
    const plan = planPrune(c.usage, { repackUnusedFraction: 0.5 });
    assert.deepEqual(
      { remove: plan.remove, repack: plan.repack, keep: plan.keep },
      { remove: c.remove, repack: c.repack, keep: c.keep },
      c.name,
    );
  }
  const plan = planPrune([pack('b', 1, 99)], { repackUnusedFraction: 0.5 });
  assert.equal(plan.repackBytes, 1);
  assert.equal(plan.unusedBytes, 99);
});

test('of a blob stored in several packs, prune keeps the copy restic keeps', () => {
  // each case: the pack of every location, which are used (1) or not (0), the locations of each used blob with copies,
  // and which locations stay used
  const cases: { name: string; packs: string; used: number[]; copies: number[][]; kept: number[] }[] = [
    { name: 'the copy beside other used blobs', packs: 'aab', used: [1, 1, 1], copies: [[1, 2]], kept: [1, 1, 0] },
    {
      name: 'the later copy when the earlier pack holds nothing else used',
      packs: 'aabb',
      used: [0, 1, 1, 1],
      copies: [[1, 2]],
      kept: [0, 0, 1, 1],
    },
    {
      name: 'a pack of nothing but copies (an interrupted prune wrote it) over a mostly unused one',
      packs: 'aab',
      used: [0, 1, 1],
      copies: [[1, 2]],
      kept: [0, 0, 1],
    },
    {
      name: 'the last copy when no pack is better',
      packs: 'aabb',
      used: [0, 1, 0, 1],
      copies: [[1, 3]],
      kept: [0, 0, 0, 1],
    },
    { name: 'copies in one pack', packs: 'aa', used: [1, 1], copies: [[0, 1]], kept: [1, 0] },
    {
      name: 'two blobs sharing two packs end up in one',
      packs: 'abab',
      used: [1, 1, 1, 1],
      copies: [
        [0, 1],
        [2, 3],
      ],
      kept: [1, 0, 1, 0],
    },
  ];
  for (const c of cases) {
    const used = Uint8Array.from(c.used);
    keepOneCopy(used, c.copies, (at) => c.packs[at]);
    assert.deepEqual([...used], c.kept, c.name);
  }
});
