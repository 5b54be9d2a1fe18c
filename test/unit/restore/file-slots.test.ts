import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FileSlots } from '../../../src/engine/restore/file-slots.ts';
import { compact } from '../../../src/engine/restore/open-blobs.ts';

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

test('once every slot is taken, waiters get back in only when half the slots are free, then together', async () => {
  const slots = new FileSlots(4);
  for (let i = 0; i < 4; i++) await slots.acquire();
  const got: number[] = [];
  for (let i = 0; i < 3; i++) void slots.acquire().then(() => got.push(i));
  await turn();
  slots.release();
  await turn();
  assert.deepEqual(got, [], 'one free slot of four lets nobody in');
  slots.release();
  await turn();
  assert.deepEqual(got, [0, 1], 'at half, waiters fill the slots again');
  slots.release();
  await turn();
  assert.deepEqual(got, [0, 1]);
  slots.release();
  await turn();
  assert.deepEqual(got, [0, 1, 2]);
});

test('below the limit a slot is granted at once', async () => {
  const slots = new FileSlots(3);
  await slots.acquire();
  await slots.acquire();
  slots.release();
  let granted = false;
  void slots.acquire().then(() => (granted = true));
  await turn();
  assert.ok(granted);
});

test('a small plaintext viewing a large buffer is copied out; one owning its buffer is kept', () => {
  const big = new Uint8Array(65536);
  big.set([1, 2, 3], 10);
  const view = big.subarray(10, 110);
  const c = compact(view);
  assert.equal(c.buffer.byteLength, 100);
  assert.deepEqual([...c.subarray(0, 3)], [1, 2, 3]);
  const own = new Uint8Array(100);
  assert.equal(compact(own), own);
});
