import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encodeIndexFile, indexText, readIndexFile, type IndexFile } from '../../../src/engine/index/index-file.ts';
import { readIndexFast } from '../../../src/engine/index/index-fast.ts';
import type { ID } from '../../../src/engine/ids/id.ts';
import type { PackedBlob } from '../../../src/engine/pack/blob.ts';

const id = (n: number): ID => n.toString(16).padStart(64, '0');

/** what the general reader hands out, as [pack, blob] pairs */
function general(bytes: Uint8Array): [ID, PackedBlob][] {
  const out: [ID, PackedBlob][] = [];
  readIndexFile(indexText(bytes), 'test', (pack, b) => out.push([pack, { ...b }]));
  return out;
}

/** what the fast reader hands out before it finishes or gives up */
function fast(bytes: Uint8Array): { read: boolean; blobs: [ID, PackedBlob][] } {
  const blobs: [ID, PackedBlob][] = [];
  const read = readIndexFast(bytes, (pack, b) => {
    blobs.push([
      pack,
      {
        id: b.ids.toString('hex', b.at, b.at + 32),
        type: b.type,
        offset: b.offset,
        length: b.length,
        uncompressedLength: b.uncompressedLength,
      },
    ]);
  });
  return { read, blobs };
}

const hex64 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex'));
const blob = fc.record({
  id: hex64,
  type: fc.constantFrom('data' as const, 'tree' as const),
  offset: fc.nat({ max: 2 ** 40 }),
  length: fc.nat({ max: 2 ** 32 }),
  uncompressedLength: fc.oneof(fc.constant(0), fc.nat({ max: 2 ** 40 })),
});
const indexFile: fc.Arbitrary<IndexFile> = fc.record({
  supersedes: fc.array(hex64, { maxLength: 3 }),
  packs: fc.array(fc.record({ id: hex64, blobs: fc.array(blob, { maxLength: 6 }) }), { maxLength: 5 }),
});

test('readIndexFast reads every index file ferry writes, blob for blob as the general reader does', () => {
  fc.assert(
    fc.property(indexFile, (f) => {
      const bytes = encodeIndexFile(f);
      const got = fast(bytes);
      assert.equal(got.read, true);
      assert.deepEqual(got.blobs, general(bytes));
    }),
  );
});

test("readIndexFast reads restic's spelling: compact, fields in its order, a newline at the end", () => {
  const text =
    `{"packs":[{"id":"${id(1)}","blobs":[{"id":"${id(2)}","type":"data","offset":0,"length":7172,"uncompressed_length":15592},` +
    `{"id":"${id(3)}","type":"tree","offset":7172,"length":984}]}]}\n`;
  const got = fast(Buffer.from(text));
  assert.equal(got.read, true);
  assert.deepEqual(got.blobs, [
    [id(1), { id: id(2), type: 'data', offset: 0, length: 7172, uncompressedLength: 15592 }],
    [id(1), { id: id(3), type: 'tree', offset: 7172, length: 984, uncompressedLength: 0 }],
  ]);
});

test('readIndexFast gives up on any other spelling, having handed out only blobs the general reader reads the same', () => {
  const entry = (n: number, extra = '') => `{"id":"${id(n)}","type":"data","offset":${n},"length":5${extra}}`;
  const file = (blobs: string, head = '{"packs":[') => `${head}{"id":"${id(100)}","blobs":[${blobs}]}]}`;
  const others = {
    'pretty-printed': JSON.stringify(JSON.parse(file(entry(1))), null, 2),
    'an unknown field': file(`${entry(1)},${entry(2, ',"note":1')},${entry(3)}`),
    'fields in another order': file(`${entry(1)},{"type":"data","id":"${id(2)}","offset":2,"length":5}`),
    'upper-case hex': file(entry(1).replace(id(1), id(1).toUpperCase().replace(/^0/, 'A'))),
    'a leading zero': file(entry(1).replace('"offset":1', '"offset":01')),
    'a negative number': file(entry(1).replace('"offset":1', '"offset":-1')),
    'a fraction': file(entry(1).replace('"length":5', '"length":5.0')),
    'sixteen digits': file(entry(1).replace('"length":5', `"length":${Number.MAX_SAFE_INTEGER}`)),
    'blobs of null': `{"packs":[{"id":"${id(100)}","blobs":null}]}`,
    'text after the end': `${file(entry(1))}x`,
    'a short id': file(entry(1).replace(id(1), 'ab')),
    'the legacy list': `[${file(entry(1))}]`,
  };
  for (const [what, text] of Object.entries(others)) {
    const bytes = Buffer.from(text);
    const got = fast(bytes);
    assert.equal(got.read, false, what);
    let expected: [ID, PackedBlob][] = [];
    try {
      expected = general(bytes);
    } catch {
      // the general reader refuses it: what the fast reader handed out must still be well-formed blobs of the file
    }
    assert.ok(got.blobs.length <= 2, what);
    for (const [k, b] of got.blobs.entries()) {
      assert.deepEqual(
        b,
        [id(100), { id: id(k + 1), type: 'data', offset: k + 1, length: 5, uncompressedLength: 0 }],
        what,
      );
      if (expected.length > 0) assert.deepEqual(b, expected[k], what);
    }
  }
});

test('readIndexFast skips what a file supersedes and reads empty lists', () => {
  assert.deepEqual(fast(Buffer.from(`{"supersedes":["${id(7)}","${id(8)}"],"packs":[]}\n`)), { read: true, blobs: [] });
  assert.deepEqual(fast(Buffer.from(`{"packs":[{"id":"${id(1)}","blobs":[]}]}`)), { read: true, blobs: [] });
  assert.equal(fast(Buffer.from(`{"supersedes":["${id(7)}",],"packs":[]}`)).read, false);
});
