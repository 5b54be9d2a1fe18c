import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BlobInRead } from '../../../src/engine/backup/worker-protocol.ts';
import { openOnWorkers, openSharing } from '../../../src/engine/restore/open-blobs.ts';
import { CorruptBlobError } from '../../../src/engine/repository/errors.ts';
import type { PackedBlob } from '../../../src/engine/pack/blob.ts';
import { randomBytes } from '../../support/repo.ts';

test('blobs go to the workers in groups of about 1 MiB, each a buffer of its own that the message can move', async () => {
  // a pack read as the pack reader hands it over: a Buffer view into a larger allocation, starting at pack offset 4096
  const start = 4096;
  const backing = Buffer.from(randomBytes(5 << 20, 7));
  const read = backing.subarray(1000, 1000 + (4 << 20));
  const blobs: PackedBlob[] = [];
  for (let offset = start; offset + 300_000 <= start + read.length; offset += 300_000) {
    blobs.push({
      type: 'data',
      id: offset.toString(16).padStart(64, '0'),
      offset,
      length: 300_000,
      uncompressedLength: 0,
    });
  }
  const posted: { bytes: Uint8Array; blobs: BlobInRead[] }[] = [];
  const open = openOnWorkers({
    async openBlobs(bytes, inRead) {
      posted.push({ bytes, blobs: inRead });
      return inRead.map((b) =>
        b.offset === 0 && posted.length === 2 ? 'bad MAC' : bytes.slice(b.offset, b.offset + b.length),
      );
    },
  });
  const results = await open(blobs[0].id, blobs, read, start, false);

  assert.ok(posted.length >= 3, `${posted.length} groups`);
  for (const p of posted) {
    assert.equal(p.bytes.byteOffset, 0, 'the group starts its own buffer');
    assert.equal(
      p.bytes.byteLength,
      p.bytes.buffer.byteLength,
      'and is all of it, so postMessage moves it instead of cloning',
    );
    const span = p.blobs.at(-1)!.offset + p.blobs.at(-1)!.length;
    assert.equal(p.bytes.length, span);
    assert.ok(span <= 1 << 20 || p.blobs.length === 1, `a group of ${span} bytes`);
  }
  assert.deepEqual(
    posted.flatMap((p) => p.blobs.map((b) => b.id)),
    blobs.map((b) => b.id),
    'every blob once, in order',
  );
  // each result is that blob's bytes (or its failure, named by pack and blob)
  const firstOfSecond = posted[0].blobs.length;
  results.forEach((r, i) => {
    const b = blobs[i];
    if (i === firstOfSecond) {
      assert.ok(r instanceof CorruptBlobError, `blob ${i}`);
      assert.match(r.message, /bad MAC/);
      return;
    }
    assert.ok(r instanceof Uint8Array, `blob ${i}`);
    assert.ok(Buffer.from(r).equals(read.subarray(b.offset - start, b.offset - start + b.length)), `blob ${i}`);
  });
});

test('a whole read the opener may give up goes to a helper that takes reads, offsets into it; any other read is opened here', async () => {
  const start = 8192;
  const blob = (offset: number): PackedBlob => ({
    type: 'data',
    id: offset.toString(16).padStart(64, '0'),
    offset,
    length: 100,
    uncompressedLength: 0,
  });
  const blobs = [blob(start), blob(start + 100)];
  let free = true;
  const moved: { bytes: Uint8Array; offsets: number[] }[] = [];
  const here: string[] = [];
  const open = openSharing(
    async (_pack, bs) => {
      here.push(bs.map((b) => b.offset).join());
      return bs.map(() => new Uint8Array(1));
    },
    {
      get takesReads() {
        return free;
      },
      async openRead(bytes, inRead) {
        moved.push({ bytes, offsets: inRead.map((b) => b.offset) });
        return inRead.map((b) => (b.offset === 100 ? 'ciphertext verification failed' : new Uint8Array(2)));
      },
    },
  );
  const whole = new Uint8Array(300);
  const results = await open('ab'.repeat(32), blobs, whole, start, true);
  assert.equal(moved.length, 1);
  assert.equal(moved[0].bytes, whole, 'the read itself, not a copy');
  assert.deepEqual(moved[0].offsets, [0, 100], 'offsets into the read');
  assert.equal((results[0] as Uint8Array).length, 2);
  assert.ok(results[1] instanceof CorruptBlobError && results[1].message.includes(blobs[1].id));

  // not the opener's to give up, a view of a larger buffer, or a helper that takes no more: opened here
  await open('ab'.repeat(32), blobs, new Uint8Array(300), start, false);
  await open('ab'.repeat(32), blobs, new Uint8Array(400).subarray(50, 350), start, true);
  free = false;
  await open('ab'.repeat(32), blobs, new Uint8Array(300), start, true);
  assert.equal(moved.length, 1);
  assert.equal(here.length, 3);
});

test('a helper that fails a moved read fails each of its blobs, naming the blob and its pack', async () => {
  const start = 0;
  const blobs: PackedBlob[] = [0, 100].map((offset) => ({
    type: 'data',
    id: String(offset).padStart(64, '0'),
    offset,
    length: 100,
    uncompressedLength: 0,
  }));
  const open = openSharing(async () => assert.fail('the read goes to the helper'), {
    takesReads: true,
    openRead: async () => {
      throw new Error('the thread writing small files stopped');
    },
  });
  const results = await open('cd'.repeat(32), blobs, new Uint8Array(200), start, true);
  results.forEach((r, i) => {
    assert.ok(r instanceof Error);
    assert.match(
      r.message,
      new RegExp(`blob ${blobs[i].id} of pack ${'cd'.repeat(32)} .*thread writing small files stopped`),
    );
  });
});
