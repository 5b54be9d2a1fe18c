import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planPrune, type PackUsage } from '../../../src/shared/prune/plan.ts';

const pack = (id: string, usedBytes: number, unusedBytes: number): PackUsage => ({
  id, usedBytes, unusedBytes, usedBlobs: usedBytes > 0 ? 1 : 0, unusedBlobs: unusedBytes > 0 ? 1 : 0,
});

test('prune plan: unused packs go, mostly-unused packs are repacked, the rest stay', () => {
  const cases: { name: string; usage: PackUsage[]; remove: string[]; repack: string[]; keep: string[] }[] = [
    { name: 'all used', usage: [pack('a', 100, 0)], remove: [], repack: [], keep: ['a'] },
    { name: 'nothing used', usage: [pack('a', 0, 100)], remove: ['a'], repack: [], keep: [] },
    { name: 'half unused', usage: [pack('a', 50, 50)], remove: [], repack: ['a'], keep: [] },
    { name: 'little unused', usage: [pack('a', 90, 10)], remove: [], repack: [], keep: ['a'] },
    { name: 'mixed', usage: [pack('a', 0, 5), pack('b', 1, 99), pack('c', 99, 1)], remove: ['a'], repack: ['b'], keep: ['c'] },
  ];
  for (const c of cases) {
    const plan = planPrune(c.usage, { repackUnusedFraction: 0.5 });
    assert.deepEqual({ remove: plan.remove, repack: plan.repack, keep: plan.keep }, { remove: c.remove, repack: c.repack, keep: c.keep }, c.name);
  }
  const plan = planPrune([pack('b', 1, 99)], { repackUnusedFraction: 0.5 });
  assert.equal(plan.repackBytes, 1);
  assert.equal(plan.unusedBytes, 99);
});
