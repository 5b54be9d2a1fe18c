import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpuShare, defaultGrowth, threadCpu, worthAnotherThread } from '../../../src/engine/backup/thread-growth.ts';

test('a second worker starts for files of kilobytes, not for tiny files nor while waiting for the disk', () => {
  // shares measured on two cores (thread-growth.ts): 100k files of 1-16 KiB; a million of 100 bytes; either cold
  assert.equal(worthAnotherThread([0.9], 0.35, 2, defaultGrowth), true);
  assert.equal(worthAnotherThread([0.54], 0.66, 2, defaultGrowth), false);
  assert.equal(worthAnotherThread([0.45], 0.2, 2, defaultGrowth), false);
});

test('another worker needs every worker busy and a core the threads leave spare', () => {
  // one worker idle enough says the work, not the threads, is the limit
  assert.equal(worthAnotherThread([0.95, 0.6], 0.3, 4, defaultGrowth), false);
  // the main thread busy too: the two cores are taken, a third thread would only share them
  assert.equal(worthAnotherThread([0.97], 0.7, 2, defaultGrowth), false);
  // the same shares on four cores leave room
  assert.equal(worthAnotherThread([0.97], 0.7, 4, defaultGrowth), true);
  assert.equal(worthAnotherThread([0.95, 0.95], 0.7, 3, defaultGrowth), false);
  assert.equal(worthAnotherThread([0.95, 0.95], 0.5, 4, defaultGrowth), true);
});

test("a thread's CPU share is its CPU time over the time between two readings", async () => {
  assert.equal(cpuShare({ usedMs: 100, atMs: 1000 }, { usedMs: 850, atMs: 2000 }), 0.75);
  const before = threadCpu();
  const until = performance.now() + 200;
  // busy on purpose: a spinning thread's share is near one. A kernel that counts CPU time in scheduler ticks may
  // credit a tick more than the wall clock saw (CI once read 1.063 over 60 ms), hence the long spin and the margin.
  while (performance.now() < until);
  const spun = cpuShare(before, threadCpu());
  assert.ok(spun > 0.5 && spun <= 1.1, `share ${spun}`);
  const idle = threadCpu();
  await new Promise((r) => setTimeout(r, 60));
  assert.ok(cpuShare(idle, threadCpu()) < 0.5);
});
