import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { compress, decompress } from '../../../src/engine/compress/zstd.ts';
import {
  blobLevel,
  compressBlob,
  compressBlobInto,
  decompressBlob,
  decompressOwnFrame,
  smallBlobMax,
} from '../../../src/engine/pack/blob-zstd.ts';

const text = (n: number): Buffer =>
  Buffer.from(
    Array.from({ length: Math.ceil(n / 7) }, (_, i) => `line ${i % 997}\n`)
      .join('')
      .slice(0, n),
  );

/** log lines of random words: text whose frames differ between zstd's levels */
const logText = (n: number): Buffer => {
  const words = Array.from({ length: 400 }, () =>
    randomBytes(3 + (randomBytes(1)[0] % 6))
      .toString('base64url')
      .toLowerCase(),
  );
  const lines: string[] = [];
  for (let size = 0; size < n; size += lines.at(-1)!.length) {
    lines.push(
      `{"ts":${1700000000 + lines.length},"level":"info","msg":"${Array.from({ length: 6 }, () => words[randomBytes(2).readUInt16LE() % words.length]).join(' ')}"}\n`,
    );
  }
  return Buffer.from(lines.join('').slice(0, n));
};

test("compressBlob writes the very frame compress does at the blob's level, frame after frame, and nothing when zstd cannot shrink the input", () => {
  // incompressible inputs in between leave a frame unfinished in the reused context: the next one must not notice,
  // and must still be written at its level
  const inputs = [
    Buffer.alloc(1, 7),
    text(100),
    randomBytes(100),
    logText(9000),
    text(5000),
    randomBytes(70_000),
    logText(12_000),
    text(1 << 20),
    logText(200_000),
    text(3 << 20),
    randomBytes(3),
    text(29),
    randomBytes(16 << 10),
    logText(smallBlobMax),
  ];
  for (const plain of inputs) {
    const reference = compress(plain, blobLevel(plain.length));
    const z = compressBlob(plain);
    if (reference.length >= plain.length) {
      assert.equal(z, undefined, `input of ${plain.length} bytes`);
      continue;
    }
    assert.ok(z !== undefined, `input of ${plain.length} bytes`);
    assert.deepEqual(Buffer.from(z), Buffer.from(reference), `input of ${plain.length} bytes`);
    assert.deepEqual(Buffer.from(decompressBlob(z, plain.length)), plain);
    assert.deepEqual(Buffer.from(decompress(z, plain.length)), plain);
  }
});

test('blobs up to 16 KiB compress at level 1, bigger ones at level 3, also written into a frame buffer', () => {
  for (const [plain, level] of [
    [logText(smallBlobMax), 1],
    [logText(smallBlobMax + 1), 3],
    [logText(300_000), 3],
  ] as const) {
    assert.equal(blobLevel(plain.length), level);
    const room = Buffer.alloc(plain.length + 40, 0xee);
    const length = compressBlobInto(plain, room, 16);
    assert.ok(length !== undefined);
    assert.deepEqual(room.subarray(16, 16 + length), Buffer.from(compress(plain, level)), `${plain.length} bytes`);
    // the level shows: the other one writes another frame
    assert.notDeepEqual(Buffer.from(compress(plain, 4 - level)), Buffer.from(compress(plain, level)));
    // zstd may use the room past the frame as it works, never the bytes before it (the IV's place)
    assert.equal(room[15], 0xee);
    assert.equal(room[16 + plain.length], 0xee);
  }
});

test("a frame is the blob's own: the next compression does not overwrite it", () => {
  const a = compressBlob(text(300));
  const copy = Buffer.from(a!);
  compressBlob(text(400));
  assert.deepEqual(Buffer.from(a!), copy);
});

test('small blobs share buffers rather than each holding a 64 KiB output chunk of its own', () => {
  const outputs = Array.from({ length: 10 }, (_, i) => compressBlob(text(100 + i))!);
  const backs = outputs.map((z, i) => decompressBlob(z, 100 + i));
  // sized outputs come from Node's shared Buffer pool: ten small ones span at most two of its slabs
  assert.ok(new Set(outputs.map((z) => z.buffer)).size <= 2);
  assert.ok(new Set(backs.map((b) => b.buffer)).size <= 2);
});

test('decompressBlob refuses a frame whose length is not the promised one', () => {
  const z = compressBlob(text(5000))!;
  assert.throws(() => decompressBlob(z, 4999));
  assert.throws(() => decompressBlob(z, 5001), /decompressed 5000 bytes where the index promised 5001/);
});

test('decompressOwnFrame reads back frame after frame, and after a bad frame throws and goes on with a fresh context', () => {
  const inputs = [text(100), text(5000), text(1 << 20), text(300), text(70_000)];
  const frames = inputs.map((p) => compressBlob(p)!);
  for (let round = 0; round < 2; round++) {
    frames.forEach((z, i) => assert.deepEqual(Buffer.from(decompressOwnFrame(z, inputs[i].length)), inputs[i]));
  }
  const damaged = Buffer.from(frames[1]);
  damaged[damaged.length - 5] ^= 0xff;
  assert.throws(() => decompressOwnFrame(damaged, inputs[1].length));
  assert.throws(() => decompressOwnFrame(frames[1], inputs[1].length - 1));
  assert.throws(
    () => decompressOwnFrame(frames[1], inputs[1].length + 1),
    /decompressed 5000 bytes where the index promised 5001/,
  );
  frames.forEach((z, i) => assert.deepEqual(Buffer.from(decompressOwnFrame(z, inputs[i].length)), inputs[i]));
});

test('decompressBlob: each plaintext is its own (a reused context never overwrites one), bad frames throw, and the next frames still read', () => {
  // small and large blobs, frames from node:zlib's public call as well as the reused compressor
  const inputs = [text(100), text(5000), text(1 << 20), text(300), text(70_000), text(128 << 10), text(200_000)];
  const frames = inputs.map((p, i) => (i % 2 === 0 ? compressBlob(p)! : compress(p)));
  const outs = frames.map((z, i) => decompressBlob(z, inputs[i].length));
  outs.forEach((out, i) => assert.deepEqual(Buffer.from(out), inputs[i], `blob ${i}`));
  const damaged = Buffer.from(frames[1]);
  damaged[damaged.length - 5] ^= 0xff;
  assert.throws(() => decompressBlob(damaged, inputs[1].length));
  // a frame cut short leaves the reused context mid-frame: it must be dropped, not fed the next frame
  assert.throws(() => decompressBlob(frames[3].subarray(0, frames[3].length - 3), inputs[3].length));
  frames.forEach((z, i) =>
    assert.deepEqual(Buffer.from(decompressBlob(z, inputs[i].length)), inputs[i], `blob ${i} again`),
  );
  outs.forEach((out, i) => assert.deepEqual(Buffer.from(out), inputs[i], `blob ${i} kept`));
});

test('a large blob decompresses into a buffer of exactly its length, which the writer may free; a frame longer, shorter or cut is refused', () => {
  // past the reused context's size, over several of zstd's 128 KiB blocks, with and without a checksum at the end
  for (const [plain, frame] of [
    [logText(3 << 20), undefined],
    [text(5 << 20), compress(text(5 << 20))],
  ] as const) {
    const z = frame ?? compressBlob(plain)!;
    const out = decompressBlob(z, plain.length);
    assert.deepEqual(Buffer.from(out), plain);
    assert.equal(out.byteOffset, 0);
    assert.equal(out.buffer.byteLength, plain.length, 'the plaintext holds a buffer of its own length, no more');
    assert.throws(() => decompressBlob(z, plain.length - 1));
    assert.throws(
      () => decompressBlob(z, plain.length + 1),
      new RegExp(`decompressed ${plain.length} bytes where the index promised ${plain.length + 1}`),
    );
    assert.throws(() => decompressBlob(z.subarray(0, z.length - 100), plain.length));
    assert.deepEqual(Buffer.from(decompressBlob(z, plain.length)), plain, 'and the next frame still reads');
  }
});
