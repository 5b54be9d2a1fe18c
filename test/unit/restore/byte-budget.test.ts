import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteBudget } from '../../../src/shared/restore/byte-budget.ts';

test('takes wait for given bytes in arrival order; a take larger than the budget waits for all of it', async () => {
  const budget = new ByteBudget(100);
  const order: string[] = [];
  await budget.take(60);
  const big = budget.take(500).then(() => order.push('big'));
  const small = budget.take(10).then(() => order.push('small'));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [], 'the small take overtook the waiting big one, or the big one did not wait');
  budget.give(60);
  await big;
  assert.deepEqual(order, ['big']);
  // the big take overdrew the budget: giving back less than all of it does not let the small one through
  budget.give(400);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, ['big'], 'the small take went through an overdrawn budget');
  budget.give(100);
  await small;
  assert.deepEqual(order, ['big', 'small']);
});
