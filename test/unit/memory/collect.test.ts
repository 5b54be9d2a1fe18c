import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { youngCap } from '../../../src/engine/memory/collect.ts';

const collect = join(import.meta.dirname, '..', '..', '..', 'src', 'engine', 'memory', 'collect.ts');

/**
 * Peak size (MiB) of a heap space in a fresh process that keeps a sliding window of `window` objects alive, so each
 * survives many scavenges and the oldest die in the old generation.
 */
/** `cap`: the young generation's cap passed to capHeapGrowth, or 0 for none (V8's own growth). */
function peak(space: 'new_space' | 'old_space', cap: number, window: number): number {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { capHeapGrowth } from ${JSON.stringify(collect)};
    if (${cap}) capHeapGrowth(${cap});
    const live = [];
    let peak = 0;
    for (let round = 0; round < 500; round++) {
      for (let i = 0; i < 2000; i++) live.push({ round, i, s: 'x'.repeat(40) + i });
      if (live.length > ${window}) live.splice(0, 20000);
      // gc observers are told between turns of the event loop
      await new Promise((r) => setImmediate(r));
      const space = getHeapSpaceStatistics().find((s) => s.space_name === ${JSON.stringify(space)});
      peak = Math.max(peak, space.space_size);
    }
    console.log(peak >> 20);`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim());
}

test("capHeapGrowth stops the young generation growing at a backup's cap, where it otherwise doubles on", () => {
  const free = peak('new_space', 0, 60000);
  const capped = peak('new_space', youngCap.backup, 60000);
  // measured: 128 MiB free, 16-18 MiB capped (gc observers hear of a collection a moment later, so a fast allocator
  // may see one growth past the cap, and the space's size counts a page or two beyond its semi-spaces)
  assert.ok(
    free >= 64,
    `without the cap the young generation reached only ${free} MiB: the test no longer shows growth`,
  );
  assert.ok(capped <= 32, `with the cap the young generation reached ${capped} MiB`);
  // a restore's cap is four times a backup's, still well short of V8's own growth
  const restore = peak('new_space', youngCap.restore, 60000);
  assert.ok(restore > capped && restore <= 96, `with a restore's cap the young generation reached ${restore} MiB`);
});

test('capHeapGrowth keeps the old generation near the bytes it holds alive', () => {
  const free = peak('old_space', 0, 200000);
  const capped = peak('old_space', youngCap.backup, 200000);
  // measured: 114-174 MiB free, 64-82 MiB capped, for about 25 MiB alive
  assert.ok(
    free >= 100,
    `without the cap the old generation reached only ${free} MiB: the test no longer shows growth`,
  );
  assert.ok(
    capped <= free * 0.75,
    `with the cap the old generation reached ${capped} MiB, against ${free} MiB without`,
  );
});
