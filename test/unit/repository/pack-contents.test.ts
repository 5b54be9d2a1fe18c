import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PackContents } from '../../../src/engine/repository/pack-contents.ts';
import type { PackedBlob } from '../../../src/engine/pack/blob.ts';

const id = (n: number): string => n.toString(16).padStart(64, '0');

test('pack contents keep blobs in pack order, each once, with every field', () => {
  const c = new PackContents();
  const blobs: PackedBlob[] = [];
  for (let i = 0; i < 70_000; i++) {
    blobs.push({
      id: id(i * 7919 + 1),
      type: i % 5 === 0 ? 'tree' : 'data',
      offset: i * 150,
      length: 150,
      uncompressedLength: i % 2 === 0 ? 0 : 100 + i,
    });
  }
  for (const b of blobs) assert.ok(c.add(b));
  assert.ok(!c.add({ ...blobs[3], offset: 1 }), 'a blob already in the pack');
  assert.ok(c.add({ ...blobs[3], type: blobs[3].type === 'tree' ? 'data' : 'tree' }), 'the same id as the other type');
  assert.equal(c.length, 70_001);
  assert.ok(c.has(blobs[69_999].id, blobs[69_999].type));
  assert.ok(!c.has(id(2), 'data'));
  const back: PackedBlob[] = [];
  c.forEachBlob(({ ids, at, type, offset, length, uncompressedLength }) => {
    back.push({ id: ids.toString('hex', at, at + 32), type, offset, length, uncompressedLength });
  });
  assert.deepEqual(back.slice(0, 70_000), blobs);
});
