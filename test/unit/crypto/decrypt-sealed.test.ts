import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decryptSealed,
  decryptSealedMany,
  open,
  openMany,
  seal,
  sealManyInto,
  sealOverhead,
  CiphertextError,
} from '../../../src/engine/crypto/seal.ts';
import { newMasterKey } from '../../../src/engine/crypto/key.ts';
import { randomBytes } from '../../support/repo.ts';

test('decryptSealed reads back what seal wrote without the MAC check that open makes', () => {
  const key = newMasterKey();
  for (const size of [0, 15, 2048, 2049, 100_000]) {
    const plain = randomBytes(size, size + 1);
    const sealed = seal(key, plain);
    assert.ok(Buffer.from(decryptSealed(key, sealed)).equals(Buffer.from(plain)), `${size} bytes`);
    if (size === 0) continue;
    const tagFlipped = Uint8Array.from(sealed);
    tagFlipped[tagFlipped.length - 1] ^= 1;
    assert.throws(() => open(key, tagFlipped), CiphertextError);
    assert.ok(Buffer.from(decryptSealed(key, tagFlipped)).equals(Buffer.from(plain)), 'the tag is not read');
  }
  assert.throws(() => decryptSealed(key, new Uint8Array(31)), CiphertextError);
});

test('sealManyInto seals each plaintext as seal would: its own IV (an empty one too), counters that never overlap, and open reads each alone', () => {
  const key = newMasterKey();
  const plains = [0, 1, 16, 17, 100, 2048, 2049, 70_000].map((n) => randomBytes(n, n + 7));
  const outs = plains.map((p) => new Uint8Array(p.length + sealOverhead));
  sealManyInto(key, plains, outs);
  const ranges = outs.map((o, i) => {
    const start = BigInt('0x' + Buffer.from(o.subarray(0, 16)).toString('hex'));
    return [start, start + BigInt(Math.max(1, Math.ceil(plains[i].length / 16)))];
  });
  ranges
    .slice(1)
    .forEach(([start], i) => assert.equal(start, ranges[i][1], `blob ${i + 1} starts where blob ${i} ended`));
  outs.forEach((o, i) => assert.ok(Buffer.from(open(key, o)).equals(Buffer.from(plains[i])), `blob ${i}`));
  assert.throws(() => sealManyInto(key, [plains[4]], [new Uint8Array(plains[4].length)]), RangeError);
});

test('decryptSealedMany reads back batches and single seals mixed, in order, each from its own IV', () => {
  const key = newMasterKey();
  const batch = (sizes: number[]): { plains: Uint8Array[]; sealed: Uint8Array[] } => {
    const plains = sizes.map((n) => randomBytes(n, n + 3));
    const sealed = plains.map((p) => new Uint8Array(p.length + sealOverhead));
    sealManyInto(key, plains, sealed);
    return { plains, sealed };
  };
  const a = batch([5, 3000, 40]);
  const b = batch([17, 0, 9000]);
  const single = randomBytes(333, 1);
  const plains = [...a.plains, Buffer.from(single), ...b.plains];
  const sealed = [...a.sealed, seal(key, single), ...b.sealed];
  // a batch's last blob put first breaks its run in two
  plains.push(a.plains[0]);
  sealed.push(a.sealed[0]);
  const back = decryptSealedMany(key, sealed);
  assert.equal(back.length, plains.length);
  back.forEach((p, i) => assert.ok(Buffer.from(p).equals(Buffer.from(plains[i])), `blob ${i}`));
  assert.throws(() => decryptSealedMany(key, [new Uint8Array(31)]), CiphertextError);
});

test('no two blobs of a batch share an IV, empty ones included: each IV is a MAC nonce', () => {
  const key = newMasterKey();
  const plains = [0, 0, 5, 0, 16, 0].map((n) => randomBytes(n, 9));
  const outs = plains.map((p) => new Uint8Array(p.length + sealOverhead));
  sealManyInto(key, plains, outs);
  assert.equal(new Set(outs.map((o) => Buffer.from(o.subarray(0, 16)).toString('hex'))).size, plains.length);
});

test('openMany opens a batch, single seals and damaged blobs mixed: each damaged one fails alone, the rest read back', () => {
  const key = newMasterKey();
  const plains = [0, 5, 16, 300, 2049, 9000].map((n) => randomBytes(n, n + 11));
  const outs = plains.map((p) => new Uint8Array(p.length + sealOverhead));
  sealManyInto(key, plains, outs);
  const single = randomBytes(777, 3);
  const tagFlipped = Uint8Array.from(outs[3]);
  tagFlipped[tagFlipped.length - 1] ^= 1;
  const bodyFlipped = Uint8Array.from(outs[4]);
  bodyFlipped[20] ^= 0x80;
  // a damaged blob in the middle of a run breaks it; the blobs after it still continue each other's counters
  const sealed = [outs[0], outs[1], outs[2], tagFlipped, bodyFlipped, outs[5], seal(key, single), new Uint8Array(20)];
  const expected = [plains[0], plains[1], plains[2], undefined, undefined, plains[5], single, undefined];
  const opened = openMany(key, sealed);
  assert.equal(opened.length, sealed.length);
  opened.forEach((r, i) => {
    const want = expected[i];
    if (want === undefined) assert.ok(r instanceof CiphertextError, `blob ${i} refused`);
    else assert.ok(!(r instanceof Error) && Buffer.from(r).equals(Buffer.from(want)), `blob ${i} read back`);
  });
  // a wrong key opens nothing
  assert.ok(openMany(newMasterKey(), outs).every((r) => r instanceof CiphertextError));
});
