import { test } from 'node:test';
import assert from 'node:assert/strict';
import { constants, zstdCompressSync } from 'node:zlib';
import { compress, decompress, frameContentSize } from '../../../src/engine/compress/zstd.ts';

const text = (n: number): Buffer => Buffer.from('index entry '.repeat(Math.ceil(n / 12)).slice(0, n));
const withoutSize = (b: Buffer): Buffer => zstdCompressSync(b, { params: { [constants.ZSTD_c_contentSizeFlag]: 0 } });

test('frameContentSize reads each width of the header field and reports a frame that declares no size', () => {
  // 0-255 take one byte in a single-segment frame, 256-65791 two (offset by 256), then four
  for (const n of [0, 1, 255, 256, 300, 65_791, 65_792, 70_000, 3 << 20]) {
    assert.equal(frameContentSize(compress(text(n))), n, `frame of ${n} bytes`);
  }
  assert.equal(frameContentSize(withoutSize(text(5000))), undefined);
  assert.equal(frameContentSize(Buffer.from('{"packs":[]}')), undefined, 'not a zstd frame');
  assert.equal(frameContentSize(compress(text(70_000)).subarray(0, 6)), undefined, 'header cut short');
});

test('decompress returns the plaintext whether or not the frame declares its size, and checks a promised size', () => {
  for (const n of [0, 1, 300, 70_000, 3 << 20]) {
    assert.deepEqual(Buffer.from(decompress(compress(text(n)))), text(n), `frame of ${n} bytes with its size`);
    assert.deepEqual(Buffer.from(decompress(withoutSize(text(n)))), text(n), `frame of ${n} bytes without its size`);
  }
  assert.throws(() => decompress(compress(text(1000)), 999), /larger than 999 bytes/);
});
