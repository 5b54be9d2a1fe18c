import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setCondition, findCondition } from '../../../src/shared/kube/conditions.ts';

const t0 = new Date('2026-01-01T00:00:00.000Z');
const t1 = new Date('2026-01-01T00:05:00.000Z');

test('a new condition is added with the time of the change', () => {
  const list = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Waiting', message: 'm' }, t0);
  assert.deepEqual(list, [
    { type: 'Ready', status: 'False', reason: 'Waiting', message: 'm', lastTransitionTime: '2026-01-01T00:00:00Z' },
  ]);
});

test('the transition time stays when only the reason or message changes', () => {
  const a = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Waiting', message: 'm' }, t0);
  const b = setCondition(a, { type: 'Ready', status: 'False', reason: 'StillWaiting', message: 'n' }, t1);
  assert.equal(b.length, 1);
  assert.equal(b[0].lastTransitionTime, '2026-01-01T00:00:00Z');
  assert.equal(b[0].reason, 'StillWaiting');
});

test('the transition time moves when the status changes, and other types are kept in place', () => {
  let list = setCondition(undefined, { type: 'A', status: 'True', reason: 'R', message: '' }, t0);
  list = setCondition(list, { type: 'B', status: 'False', reason: 'R', message: '' }, t0);
  const next = setCondition(list, { type: 'A', status: 'False', reason: 'R', message: '' }, t1);
  assert.deepEqual(
    next.map((c) => c.type),
    ['A', 'B'],
  );
  assert.equal(findCondition(next, 'A')?.lastTransitionTime, '2026-01-01T00:05:00Z');
  assert.equal(findCondition(list, 'A')?.status, 'True', 'the input list is not changed');
});
