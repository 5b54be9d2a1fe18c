import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteBudget } from '../../../src/engine/restore/byte-budget.ts';

test('a take goes through only while its bytes are free; one larger than the budget needs all of it and overdraws', () => {
  const budget = new ByteBudget(100);
  assert.ok(budget.tryTake(60));
  assert.ok(!budget.tryTake(50), 'took more than was free');
  assert.ok(!budget.tryTake(500), 'a take larger than the budget went through while part of it was taken');
  budget.give(60);
  assert.ok(budget.tryTake(500));
  // overdrawn: giving back less than all of it leaves nothing free
  budget.give(400);
  assert.ok(!budget.tryTake(10), 'a take went through an overdrawn budget');
  budget.give(100);
  assert.ok(budget.tryTake(100));
});
