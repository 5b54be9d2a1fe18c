import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { encodeIndexFile, indexText, readIndexFile, type IndexFile } from '../../../src/engine/index/index-file.ts';
import type { ID } from '../../../src/engine/ids/id.ts';
import type { PackedBlob } from '../../../src/engine/pack/blob.ts';

const id = (n: number): ID => n.toString(16).padStart(64, '0');
const read = (json: string): { supersedes: ID[]; blobs: [ID, PackedBlob][] } => {
  const blobs: [ID, PackedBlob][] = [];
  const supersedes = readIndexFile(indexText(Buffer.from(json)), 'deadbeefcafe', (pack, b) => blobs.push([pack, b]));
  return { supersedes, blobs };
};

test("encodeIndexFile writes restic's layout: supersedes only when set, uncompressed_length only when compressed", () => {
  const f: IndexFile = {
    supersedes: [id(9)],
    packs: [
      {
        id: id(1),
        blobs: [
          { id: id(2), type: 'data', offset: 0, length: 2 ** 40, uncompressedLength: Number.MAX_SAFE_INTEGER },
          { id: id(3), type: 'tree', offset: 77, length: 5, uncompressedLength: 0 },
        ],
      },
      { id: id(4), blobs: [] },
    ],
  };
  const expected = {
    supersedes: [id(9)],
    packs: [
      {
        id: id(1),
        blobs: [
          { id: id(2), type: 'data', offset: 0, length: 2 ** 40, uncompressed_length: Number.MAX_SAFE_INTEGER },
          { id: id(3), type: 'tree', offset: 77, length: 5 },
        ],
      },
      { id: id(4), blobs: [] },
    ],
  };
  assert.equal(Buffer.from(encodeIndexFile(f)).toString(), JSON.stringify(expected) + '\n');
  assert.equal(Buffer.from(encodeIndexFile({ supersedes: [], packs: [] })).toString(), '{"packs":[]}\n');
  const back = read(Buffer.from(encodeIndexFile(f)).toString());
  assert.deepEqual(back.supersedes, [id(9)]);
  assert.deepEqual(back.blobs, [
    [id(1), { id: id(2), type: 'data', offset: 0, length: 2 ** 40, uncompressedLength: Number.MAX_SAFE_INTEGER }],
    [id(1), { id: id(3), type: 'tree', offset: 77, length: 5, uncompressedLength: 0 }],
  ]);
});

test('readIndexFile skips unknown fields, takes null for empty lists and waits for a pack id listed after its blobs', () => {
  const got = read(`{"x":{"y":[1,"z"]},"supersedes":null,"packs":[
    {"blobs":[{"type":"tree","length":3,"offset":1,"id":"${id(2)}","future":true}],"id":"${id(1)}"},
    {"id":"${id(4)}","blobs":null},
    {"id":"${id(5)}","blobs":[{"id":"${id(6)}","type":"data","offset":0,"length":9,"uncompressed_length":null}]}]}`);
  assert.deepEqual(got.supersedes, []);
  assert.deepEqual(got.blobs, [
    [id(1), { id: id(2), type: 'tree', offset: 1, length: 3, uncompressedLength: 0 }],
    [id(5), { id: id(6), type: 'data', offset: 0, length: 9, uncompressedLength: 0 }],
  ]);
  assert.deepEqual(read('{"packs":null}').blobs, []);
});

test('readIndexFile names the index file and what is wrong with it', () => {
  assert.throws(() => read('[{"id":"x"}]'), /index deadbeef uses the legacy format/);
  assert.throws(
    () => read(`{"packs":[{"id":"${id(1)}","blobs":[{"id":"${id(2)}","type":"blob","offset":0,"length":1}]}]}`),
    /index deadbeef has a blob of unknown type "blob"/,
  );
  assert.throws(() => read(`{"packs":[{"blobs":[]}]}`), /index deadbeef lists a pack without an id/);
  assert.throws(
    () => read(`{"packs":[{"id":"${id(1)}","blobs":[{"id":"${id(2)}","type":"data","offset":0,"length":1.5}]}]}`),
    /index deadbeef field "length" holds 1.5/,
  );
  assert.throws(
    () => read(`{"packs":[{"id":"${id(1)}","blobs":[{"id":"${id(2)}","type":"data","offset":-4,"length":1}]}]}`),
    /index deadbeef field "offset" holds -4, which is not an unsigned integer/,
  );
  assert.throws(() => read('{"packs":[}'), /index deadbeef is not valid JSON/);
  assert.throws(() => read('{"packs":[]} {}'), /index deadbeef is not valid JSON: expected the end of the document/);
});

test('the pack ids read from an index file do not keep its text alive', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const blobs = Array.from({ length: 40_000 }, (_, i) => ({
    id: id(i + 1),
    type: 'data' as const,
    offset: i * 100,
    length: 100,
    uncompressedLength: 0,
  }));
  const bytes = encodeIndexFile({
    supersedes: [id(7)],
    packs: [
      { id: id(1), blobs: blobs.slice(0, 20_000) },
      { id: id(2), blobs: blobs.slice(20_000) },
    ],
  });
  const strings = (): number => {
    gc();
    const m = process.memoryUsage();
    return m.external - m.arrayBuffers;
  };
  const kept = new Set<string>();
  const before = strings();
  // the text is made and read in a frame of its own, as the repository does, so only what the reader kept is left
  const read = (): string[] => readIndexFile(indexText(bytes), 'deadbeef', (pack) => kept.add(pack));
  const supersedes = read();
  const after = strings();
  assert.deepEqual([...kept], [id(1), id(2)]);
  assert.deepEqual(supersedes, [id(7)]);
  // the text is about 4 MB
  assert.ok(after - before < 1 << 20, `${((after - before) / 2 ** 20).toFixed(1)} MiB of strings kept by two pack ids`);
});
