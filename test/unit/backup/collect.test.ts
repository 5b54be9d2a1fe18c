import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const collect = join(import.meta.dirname, '..', '..', '..', 'src', 'shared', 'backup', 'collect.ts');

/** Peak young-generation size (MiB) of a fresh process that keeps a sliding window of objects alive across scavenges. */
function youngPeak(cap: boolean): number {
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { capYoungGeneration } from ${JSON.stringify(collect)};
    if (${cap}) capYoungGeneration();
    const live = [];
    let peak = 0;
    for (let round = 0; round < 400; round++) {
      for (let i = 0; i < 2000; i++) live.push({ round, i, s: 'x'.repeat(40) + i });
      if (live.length > 60000) live.splice(0, 20000);
      // gc observers are told between turns of the event loop
      await new Promise((r) => setImmediate(r));
      const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
      peak = Math.max(peak, young.space_size);
    }
    console.log(peak >> 20);`;
  return Number(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' }).trim());
}

test('capYoungGeneration stops the young generation growing at about 8 MiB, where it otherwise doubles on', () => {
  const free = youngPeak(false);
  const capped = youngPeak(true);
  // measured: 128 MiB free, 16-18 MiB capped (gc observers hear of a collection a moment later, so a fast allocator
  // may see one growth past the cap, and the space's size counts a page or two beyond its semi-spaces)
  assert.ok(free >= 64, `without the cap the young generation reached only ${free} MiB: the test no longer shows growth`);
  assert.ok(capped <= 32, `with the cap the young generation reached ${capped} MiB`);
});
