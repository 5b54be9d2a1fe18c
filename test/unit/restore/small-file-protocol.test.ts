import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeBatch, encodeBatch, type SmallFile } from '../../../src/engine/restore/small-file-protocol.ts';

const plain: fc.Arbitrary<SmallFile> = fc.record({
  kind: fc.constantFrom('file' as const, 'metadata' as const),
  path: fc.uint8Array({ minLength: 1, maxLength: 300 }),
  data: fc.uint8Array({ maxLength: 5000 }),
  size: fc.nat({ max: 2 ** 40 }),
  uid: fc.nat({ max: 2 ** 32 - 1 }),
  gid: fc.nat({ max: 2 ** 32 - 1 }),
  mode: fc.nat({ max: 0o7777 }),
  times: fc.uint8Array({ minLength: 32, maxLength: 32 }),
});
const sealed: fc.Arbitrary<SmallFile> = fc
  .tuple(plain, fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.nat({ max: 2 ** 32 - 1 }))
  .map(([f, id, uncompressedLength]) => ({ ...f, kind: 'sealed' as const, blob: { id, uncompressedLength } }));
const file = fc.oneof(plain, sealed);

test('a batch decodes to the files encoded, whatever their kinds, paths, contents, ids and times', () => {
  fc.assert(
    fc.property(fc.array(file, { maxLength: 20 }), (files) => {
      const decoded = decodeBatch(encodeBatch(files));
      assert.equal(decoded.length, files.length);
      decoded.forEach((d, i) => {
        const f = files[i];
        assert.deepEqual([Buffer.from(d.path), Buffer.from(d.data)], [Buffer.from(f.path), Buffer.from(f.data)]);
        assert.deepEqual(
          [d.kind, d.size, d.uid, d.gid, d.mode, Buffer.from(d.times)],
          [f.kind, f.size, f.uid, f.gid, f.mode, Buffer.from(f.times)],
        );
        assert.deepEqual(
          d.blob && [Buffer.from(d.blob.id), d.blob.uncompressedLength],
          f.blob && [Buffer.from(f.blob.id), f.blob.uncompressedLength],
        );
      });
    }),
    { numRuns: 200 },
  );
});
