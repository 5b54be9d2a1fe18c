import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { BlobTable } from '../../../src/engine/index/table.ts';
import type { BlobType } from '../../../src/engine/pack/blob.ts';

const id = (n: number, salt = ''): string => createHash('sha256').update(`${salt}${n}`).digest('hex');

test('finds every blob among 200,000 (several chunks), tells trees from data', () => {
  const t = new BlobTable();
  const want = new Map<
    string,
    { pack: string; offset: number; length: number; uncompressedLength: number; type: BlobType }
  >();
  for (let n = 0; n < 200_000; n++) {
    const type: BlobType = n % 7 === 0 ? 'tree' : 'data';
    const loc = {
      pack: id(n % 97, 'pack'),
      offset: n * 3,
      length: 100 + (n % 50),
      uncompressedLength: n % 3 === 0 ? 0 : 400 + n,
      type,
    };
    assert.equal(t.add(loc.pack, { id: id(n), ...loc }), true);
    want.set(type + id(n), loc);
  }
  assert.equal(
    t.add(id(5 % 97, 'pack'), { id: id(5), type: 'data', offset: 15, length: 105, uncompressedLength: 405 }),
    false,
    'the same location is not added twice',
  );
  assert.equal(t.size, 200_000);
  let position = 0;
  for (const got of t.entries()) {
    const w = want.get(got.type + got.id);
    assert.deepEqual(
      {
        pack: got.pack,
        offset: got.offset,
        length: got.length,
        uncompressedLength: got.uncompressedLength,
        type: got.type,
      },
      w,
    );
    assert.equal(t.position(got.id, got.type), position, 'entries come in the order they were added');
    assert.deepEqual(t.at(position), got);
    position++;
  }
  assert.equal(position, 200_000);
  // the same id as the other type is a different blob
  assert.equal(t.has(id(0), 'data'), false);
  assert.equal(t.has(id(0), 'tree'), true);
  assert.equal(t.get(id(1), 'tree'), undefined);
  assert.equal(t.has(id(200_000), 'data'), false);
  assert.equal(t.position(id(200_001), 'data'), -1);
  assert.throws(() => t.at(200_000), /no blob at position 200000/);
});

test('a pack span covers its blobs of one type', () => {
  const t = new BlobTable(4);
  const pack = id(1, 'pack');
  t.add(pack, { id: id(1), type: 'data', offset: 500, length: 100, uncompressedLength: 0 });
  t.add(pack, { id: id(2), type: 'data', offset: 100, length: 50, uncompressedLength: 0 });
  t.add(pack, { id: id(3), type: 'tree', offset: 0, length: 100, uncompressedLength: 0 });
  assert.deepEqual(t.span(pack, 'data'), { start: 100, end: 600 });
  assert.deepEqual(t.span(pack, 'tree'), { start: 0, end: 100 });
  assert.equal(t.span(id(2, 'pack'), 'data'), undefined);
  assert.deepEqual(t.packs(), [pack]);
});

test('a lookup with something that is not an id says so', () => {
  const t = new BlobTable();
  assert.throws(() => t.has('abc', 'data'), /"abc" is not a blob id \(64 hex digits\)/);
  assert.throws(() => t.get('zz'.repeat(32), 'data'), /is not a blob id/);
  assert.throws(() => t.has(`${'ab'.repeat(32)}cd`, 'data'), /is not a blob id/, 'one byte too many');
});

test('a million blobs take under 64 MiB, and a small table stays small', () => {
  const before = process.memoryUsage().arrayBuffers;
  const small = new BlobTable();
  assert.ok(process.memoryUsage().arrayBuffers - before < 256 * 1024, 'an empty table allocates little');
  small.add(id(0, 'pack'), { id: id(0), type: 'data', offset: 0, length: 1, uncompressedLength: 0 });
  const t = new BlobTable();
  const pack = id(0, 'pack');
  const h = createHash('sha256');
  for (let n = 0; n < 1_000_000; n++) {
    const b = h.copy().update(String(n)).digest('hex');
    t.add(pack, { id: b, type: 'data', offset: n, length: 100, uncompressedLength: 0 });
  }
  const used = process.memoryUsage().arrayBuffers - before;
  assert.equal(t.size, 1_000_000);
  assert.ok(used < 64 * 1024 * 1024, `a million entries took ${(used / 1048576).toFixed(1)} MiB`);
});

test('a blob stored in several packs keeps every location; lookups answer the first one added', () => {
  const t = new BlobTable(4);
  const first = { id: id(1), type: 'data' as const, offset: 0, length: 10, uncompressedLength: 0 };
  assert.equal(t.add(id(1, 'pack'), first), true);
  // many other blobs in between, so the table grows and rehashes while both copies are in it
  for (let n = 2; n < 5000; n++)
    t.add(id(n % 3, 'pack'), { id: id(n), type: 'data', offset: n, length: 10, uncompressedLength: 0 });
  assert.equal(t.add(id(2, 'pack'), { ...first, offset: 40 }), true, 'a second pack');
  assert.equal(t.add(id(1, 'pack'), { ...first, offset: 90 }), true, 'a second place in the same pack');
  assert.equal(t.add(id(2, 'pack'), { ...first, offset: 40 }), false, 'the same location again');
  for (let n = 5000; n < 20_000; n++)
    t.add(id(n % 3, 'pack'), { id: id(n), type: 'data', offset: n, length: 10, uncompressedLength: 0 });
  assert.deepEqual(
    t.locations(id(1), 'data').map((l) => [l.pack, l.offset]),
    [
      [id(1, 'pack'), 0],
      [id(2, 'pack'), 40],
      [id(1, 'pack'), 90],
    ],
  );
  assert.deepEqual(t.get(id(1), 'data'), { ...first, pack: id(1, 'pack') });
  assert.equal(t.position(id(1), 'data'), 0);
  assert.deepEqual(t.positions(id(1), 'data'), [0, 4999, 5000]);
  assert.equal(t.packAt(4999), id(2, 'pack'));
  assert.deepEqual(t.locations(id(1), 'tree'), []);
  assert.equal(t.size, 20_000 - 1 + 2);
  // the span of the second pack covers the copy it holds
  assert.deepEqual(t.span(id(2, 'pack'), 'data'), { start: 2, end: 19_997 + 10 });
});
