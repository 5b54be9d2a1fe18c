import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newMasterKey } from '../../../src/engine/crypto/key.ts';
import { sealOverhead } from '../../../src/engine/crypto/seal.ts';
import { openVerified } from '../../../src/engine/pack/prepare.ts';
import { sealSmallBlobs } from '../../../src/engine/backup/small-seal.ts';
import { packPaths, unpackPaths } from '../../../src/engine/backup/packed-paths.ts';
import { appendFileSync, type ReadBuffer } from '../../../src/engine/backup/open-source.ts';
import { transferList } from '../../../src/engine/backup/transfer.ts';

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

test('a batch of small blobs sealed side by side: each slice opens to its plaintext, and the buffer can be transferred', () => {
  const key = newMasterKey();
  const plains = [
    Buffer.from('x'.repeat(100)),
    randomBytes(100),
    Buffer.alloc(0),
    Buffer.from('ab'.repeat(3000)),
    randomBytes(5000),
  ];
  const { sealed, blobs } = sealSmallBlobs(
    key,
    true,
    plains.map((data) => ({ id: sha(data), data })),
  );
  assert.equal(
    sealed.length,
    blobs.reduce((n, b) => n + b.sealedLength, 0),
  );
  assert.equal(transferList([sealed]).length, 1);
  let at = 0;
  blobs.forEach((b, i) => {
    assert.equal(b.id, sha(plains[i]));
    assert.equal(b.length, plains[i].length);
    const back = openVerified(key, sealed.subarray(at, at + b.sealedLength), b.uncompressedLength, b.id);
    assert.deepEqual(Buffer.from(back as Uint8Array), plains[i]);
    at += b.sealedLength;
  });
  // compressible text is stored compressed, random bytes raw
  assert.ok(blobs[0].uncompressedLength === 100 && blobs[0].sealedLength < 100 + sealOverhead);
  assert.equal(blobs[1].uncompressedLength, 0);
});

test('a blob whose id does not match its content is refused', () => {
  assert.throws(
    () => sealSmallBlobs(newMasterKey(), true, [{ id: sha(Buffer.from('a')), data: Buffer.from('b') }]),
    /did not read back correctly/,
  );
});

test('packed paths come back as they went, empty ones included, in a buffer of their own', () => {
  const paths = [Buffer.from('/a/b'), Buffer.alloc(0), Buffer.from('/ü/ç/\xff'), Buffer.from('/x')];
  const packed = packPaths(paths);
  assert.equal(transferList([packed.bytes]).length, 1);
  assert.deepEqual(
    unpackPaths(packed).map((p) => Buffer.from(p)),
    paths,
  );
});

test('appendFileSync reads whole files one after another, growing the buffer when they do not fit', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-append-'));
  try {
    const contents = [randomBytes(100), Buffer.alloc(0), randomBytes(70_000), randomBytes(3)];
    const into: ReadBuffer = { bytes: Buffer.allocUnsafeSlow(1000), used: 0 };
    const ends: number[] = [];
    for (const [i, c] of contents.entries()) {
      await writeFile(join(dir, `f${i}`), c);
      appendFileSync(Buffer.from(join(dir, `f${i}`)), into);
      ends.push(into.used);
    }
    assert.deepEqual(into.bytes.subarray(0, into.used), Buffer.concat(contents));
    assert.deepEqual(ends, [100, 100, 70_100, 70_103]);
    assert.throws(() => appendFileSync(Buffer.from(join(dir, 'missing')), into), { code: 'ENOENT' });
  } finally {
    await rm(dir, { recursive: true });
  }
});
