import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteBudget } from '../../../src/shared/restore/byte-budget.ts';

test('takes wait for given bytes in arrival order; a take larger than the budget waits for all of it', async () => {
  const budget = new ByteBudget(100);
  const order: string[] = [];
  assert.equal(await budget.take(60), 60);
  const big = budget.take(500).then((n) => { order.push(`big ${n}`); return n; });
  const small = budget.take(10).then((n) => { order.push(`small ${n}`); return n; });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'the small take overtook the waiting big one, or the big one did not wait');
  budget.give(60);
  const granted = await big;
  assert.deepEqual(order, ['big 100']);
  budget.give(granted);
  await small;
  assert.deepEqual(order, ['big 100', 'small 10']);
});
