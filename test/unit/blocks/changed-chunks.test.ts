import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chunker } from '../../../src/engine/chunker/chunker.ts';
import { hashID, zeroID } from '../../../src/engine/ids/id.ts';
import { allocatedReader, deviceReader, type BlockReader } from '../../../src/engine/blocks/block-reader.ts';
import { changedChunks, type ParentBlob } from '../../../src/engine/blocks/changed-chunks.ts';
import type { ByteRange } from '../../../src/engine/blocks/byte-ranges.ts';
import { testPolynomial } from '../../support/repo.ts';

const chunker = new Chunker(testPolynomial);
const MiB = 1 << 20;

/** An in-memory device counting what is read of it. */
function memoryReader(device: Buffer): BlockReader {
  return deviceReader(
    {
      read: async (buf: Uint8Array, at: number, length: number, position: number) => {
        const n = device.copy(buf, at, position, position + length);
        return { bytesRead: n, buffer: buf };
      },
    } as never,
    device.length,
  );
}

async function content(
  reader: BlockReader,
  parent?: readonly ParentBlob[],
  changed: ByteRange[] = [],
): Promise<ParentBlob[]> {
  const out: ParentBlob[] = [];
  for await (const c of changedChunks(reader, chunker, { parent, changed })) {
    if ('reused' in c) out.push(c.reused);
    else out.push({ id: c.zero ? zeroID(c.data.length) : hashID(c.data), size: c.data.length });
  }
  return out;
}

/** the device with `changes` written, the list a full read makes of it, and what the incremental made and read */
async function incremental(
  device: Buffer,
  changes: ByteRange[],
  reported = changes,
): Promise<{ full: ParentBlob[]; got: ParentBlob[]; read: number }> {
  const parent = await content(memoryReader(device));
  const changedDevice = Buffer.from(device);
  for (const c of changes) randomBytes(c.length).copy(changedDevice, c.offset);
  const full = await content(memoryReader(changedDevice));
  const reader = memoryReader(changedDevice);
  const got = await content(reader, parent, reported);
  return { full, got, read: reader.bytesRead };
}

const device = randomBytes(48 * MiB);

test('a change in the middle re-reads a few chunks around it and yields exactly the full read list', async () => {
  const r = await incremental(device, [{ offset: 20 * MiB + 12345, length: 4096 }]);
  assert.deepEqual(r.got, r.full);
  assert.ok(r.read < 12 * MiB, `read ${r.read} bytes of ${device.length}`);
});

test('hostile placements: offset 0, the last byte, adjacent and overlapping out-of-order ranges, past the end', async () => {
  const cases: { name: string; changes: ByteRange[]; reported?: ByteRange[] }[] = [
    { name: 'offset 0', changes: [{ offset: 0, length: 1 }] },
    { name: 'last byte', changes: [{ offset: device.length - 1, length: 1 }] },
    {
      name: 'adjacent, reported out of order and overlapping',
      changes: [
        { offset: 8 * MiB, length: MiB },
        { offset: 9 * MiB, length: MiB },
      ],
      reported: [
        { offset: 9 * MiB, length: MiB },
        { offset: 8 * MiB + 100, length: MiB },
        { offset: 8 * MiB, length: 2 * MiB },
      ],
    },
    {
      name: 'a reported range running past the device',
      changes: [{ offset: device.length - 4096, length: 4096 }],
      reported: [{ offset: device.length - 4096, length: 64 * MiB }],
    },
    {
      name: 'many small changes',
      changes: Array.from({ length: 30 }, (_, i) => ({ offset: i * 1_500_001 + 7, length: 512 })),
    },
  ];
  for (const c of cases) {
    const r = await incremental(device, c.changes, c.reported);
    assert.deepEqual(r.got, r.full, c.name);
    assert.ok(r.read < device.length, `${c.name}: read ${r.read} bytes of ${device.length}`);
  }
});

test('changes a chunk apart are re-chunked in one pass: no byte is read twice, nothing beyond a full read', async () => {
  const changes = Array.from({ length: 40 }, (_, i) => ({ offset: i * 1_200_000 + 99, length: 100 }));
  const r = await incremental(device, changes);
  assert.deepEqual(r.got, r.full);
  assert.ok(r.read <= device.length, `read ${r.read} bytes of ${device.length}`);
});

test('unreported changes are not seen: only reported ranges are read (the list trusts the tracking)', async () => {
  const r = await incremental(device, [{ offset: 30 * MiB, length: 10 }], []);
  assert.equal(r.read, 0);
});

test('a parent list not summing to the device size, or with a bad size, falls back to a full read', async () => {
  const parent = await content(memoryReader(device));
  for (const bad of [parent.slice(1), [...parent, { id: 'x', size: 1 }], [{ ...parent[0], size: -1 }, ...parent]]) {
    const reader = memoryReader(device);
    assert.deepEqual(await content(reader, bad, []), parent);
    assert.equal(reader.bytesRead, device.length);
  }
});

test('a first backup reads only allocated ranges and makes the same blobs as a full read of the sparse device', async () => {
  const sparse = Buffer.alloc(40 * MiB);
  const allocated = [
    { offset: 0, length: 64 * 1024 },
    { offset: 10 * MiB, length: 3 * MiB },
    { offset: 40 * MiB - 4096, length: 4096 },
  ];
  for (const a of allocated) randomBytes(a.length).copy(sparse, a.offset);
  const full = await content(memoryReader(sparse));
  const inner = memoryReader(sparse);
  const got = await content(allocatedReader(inner, allocated));
  assert.deepEqual(got, full);
  assert.equal(inner.bytesRead, 3 * MiB + 64 * 1024 + 4096);
});

test('a real file read through a handle: a short device is an error, not zeros', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-blocks-'));
  try {
    await writeFile(join(dir, 'dev'), randomBytes(3 * MiB));
    const fh = await open(join(dir, 'dev'));
    try {
      const ok = await content(deviceReader(fh, 3 * MiB));
      assert.equal(
        ok.reduce((n, b) => n + b.size, 0),
        3 * MiB,
      );
      await assert.rejects(
        content(deviceReader(fh, 4 * MiB)),
        /device ended at 3145728 bytes, before its size of 4194304/,
      );
    } finally {
      await fh.close();
    }
  } finally {
    await rm(dir, { recursive: true });
  }
});
