import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { looksIncompressible } from '../../../src/engine/pack/incompressible.ts';
import { openVerified, prepareBlob } from '../../../src/engine/pack/prepare.ts';
import { compress } from '../../../src/engine/compress/zstd.ts';
import { newMasterKey } from '../../../src/engine/crypto/key.ts';
import { randomBytes } from '../../support/repo.ts';

const json = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `{"line":${i},"name":"item-${i % 977}"}\n`).join(''));

test('random bytes of 2 KiB to 8 MiB look incompressible, and zstd indeed cannot shrink them', () => {
  // whole blobs up to 4 KiB, sampled above, in slices that do not divide evenly at 100,003 bytes
  for (const [i, size] of [2048, 4096, 4097, 8192, 65_536, 100_003, 1 << 20, 8 << 20].entries()) {
    const data = randomBytes(size, i + 1);
    assert.ok(looksIncompressible(data), `${size} random bytes`);
    assert.ok(compress(data).length >= data.length, `zstd shrank ${size} random bytes`);
  }
});

test('text, JSON, hex, base64, zeros and short blobs are compressed', () => {
  const random = Buffer.from(randomBytes(300_000, 7));
  const cases: [string, Uint8Array][] = [
    ['json', json],
    ['hex', Buffer.from(random.toString('hex'))],
    ['base64', Buffer.from(random.toString('base64'))],
    ['zeros', new Uint8Array(1 << 20)],
    ['short random', randomBytes(2047, 3)],
    // random halves around a compressible middle: the sample slices see the text
    [
      'mixed',
      Buffer.concat([random.subarray(0, 100_000), json.subarray(0, 400_000), random.subarray(100_000, 200_000)]),
    ],
  ];
  for (const [name, data] of cases) assert.equal(looksIncompressible(data), false, name);
});

test('small text files and small files that are random only in part are compressed', () => {
  // the sample of a small blob is 4 KiB; its slices must reach past a random start
  const random = Buffer.from(randomBytes(8192, 11));
  for (const size of [3000, 5000, 9000, 16_384, 60_000])
    assert.equal(looksIncompressible(json.subarray(0, size)), false, `${size} bytes of JSON`);
  assert.equal(
    looksIncompressible(Buffer.concat([random.subarray(0, 4096), json.subarray(0, 12_288)])),
    false,
    'random first 4 KiB, then JSON',
  );
  assert.equal(
    looksIncompressible(Buffer.concat([json.subarray(0, 12_288), random.subarray(0, 4096)])),
    false,
    'JSON, then random last 4 KiB',
  );
});

test('prepareBlob stores random data raw and compressible data compressed, both reading back', () => {
  const key = newMasterKey();
  for (const data of [randomBytes(50_000, 9), json]) {
    const id = createHash('sha256').update(data).digest('hex');
    const blob = prepareBlob(key, 'data', id, data, true);
    assert.equal(blob.uncompressedLength > 0, data === json);
    const back = openVerified(key, blob.sealed, blob.uncompressedLength, id);
    assert.ok(typeof back !== 'string' && Buffer.from(back).equals(Buffer.from(data)));
  }
});

test('blobs prepared one after another stay intact, above the largest chunk too, each reading back alone', () => {
  // prepareBlob stages every body in one buffer per thread; what it returns must not share it
  const key = newMasterKey();
  const blobs: Uint8Array[] = [
    json,
    randomBytes(3 << 20, 12),
    json.subarray(0, 5000),
    randomBytes((8 << 20) + 100, 13),
    Buffer.concat(Array<Uint8Array>(30).fill(json)),
    new Uint8Array(0),
  ];
  assert.ok(blobs[4].length > 8 << 20, 'a compressible blob above the largest chunk');
  const prepared = blobs.map((data) => {
    const id = createHash('sha256').update(data).digest('hex');
    return { id, data, blob: prepareBlob(key, 'data', id, data, true) };
  });
  for (const { id, data, blob } of prepared) {
    const back = openVerified(key, blob.sealed, blob.uncompressedLength, id);
    assert.ok(typeof back !== 'string' && Buffer.from(back).equals(Buffer.from(data)), `${data.length} bytes`);
  }
});
