import { test } from 'node:test';
import assert from 'node:assert/strict';
import { release } from '../../../src/engine/memory/release.ts';

test('release frees a buffer that owns its memory at once, without a collection', () => {
  const before = process.memoryUsage().arrayBuffers;
  const big = Buffer.allocUnsafe(64 << 20).fill(7);
  assert.ok(process.memoryUsage().arrayBuffers - before >= 64 << 20);
  release(big);
  assert.equal(big.length, 0);
  assert.ok(process.memoryUsage().arrayBuffers - before < 1 << 20);
});

test('release leaves alone views that share their memory: pool slices and parts of a buffer', () => {
  const pooled = Buffer.from('small');
  release(pooled);
  assert.equal(pooled.toString(), 'small');
  const whole = Buffer.alloc(1 << 20, 1);
  const part = whole.subarray(10, 100);
  release(part);
  assert.equal(part.length, 90);
  assert.equal(whole[0], 1);
  release(whole);
  release(whole);
  assert.equal(whole.length, 0);
});
