// ferry's chunker against the real one: every boundary must be where github.com/restic/chunker puts it, whatever
// the polynomial, the kernel, and the sizes of the buffers the stream arrives in.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Chunker } from '../../../src/engine/chunker/chunker.ts';
import { maxChunkSize, minChunkSize } from '../../../src/engine/chunker/limits.ts';
import type { ChunkerOptions } from '../../../src/engine/chunker/chunker.ts';
import { derivePolynomial, randomPolynomial } from '../../../src/engine/chunker/polynomial.ts';
import type { Polynomial } from '../../../src/engine/chunker/polynomial.ts';
import { chunkrefPath, refChunks } from '../../support/chunkref.ts';
import type { RefChunk } from '../../support/chunkref.ts';
import { seededBytes, seededReader } from './seeded-bytes.ts';

const kernels: NonNullable<ChunkerOptions['kernel']>[] = ['js', 'wasm'];
const MiB = 1024 * 1024;

const polynomials: Polynomial[] = [
  0x3da3358b4dc173n, // restic's test polynomial
  derivePolynomial(seededReader('chunker polynomial 1', 8 * 2000)),
  derivePolynomial(seededReader('chunker polynomial 2', 8 * 2000)),
];

/** Chunks `data` arriving in pieces of `feed` bytes (each piece a separate view, so state must carry over). */
function ourChunks(data: Uint8Array, pol: Polynomial, kernel: ChunkerOptions['kernel'], feed: number): RefChunk[] {
  const chunker = new Chunker(pol, { kernel });
  const cuts: number[] = [];
  for (let offset = 0; offset < data.length; offset += feed) {
    const piece = data.subarray(offset, Math.min(offset + feed, data.length));
    for (let cut = chunker.next(piece); cut >= 0; cut = chunker.next(piece, cut)) cuts.push(offset + cut);
  }
  if (cuts.at(-1) !== data.length && data.length > 0) cuts.push(data.length);
  return cuts.map((end, i) => {
    const offset = i === 0 ? 0 : cuts[i - 1];
    const sha256 = createHash('sha256').update(data.subarray(offset, end)).digest('hex');
    return { offset, length: end - offset, sha256 };
  });
}

let dir: string;
let files = 0;

async function reference(data: Uint8Array, pol: Polynomial): Promise<RefChunk[]> {
  const file = join(dir, `input-${files++}`);
  await writeFile(file, data);
  try {
    return await refChunks(pol, file);
  } finally {
    await rm(file);
  }
}

/** Asserts ferry cuts `data` exactly as restic does, for every polynomial, kernel and feed size given. */
async function assertSameChunks(data: Uint8Array, pols: Polynomial[], feeds: number[]): Promise<RefChunk[][]> {
  const references: RefChunk[][] = [];
  for (const pol of pols) {
    const expected = await reference(data, pol);
    for (const kernel of kernels) {
      for (const feed of feeds) {
        const what = `${data.length} bytes, polynomial ${pol.toString(16)}, ${kernel} kernel, fed ${feed} at a time`;
        assert.deepEqual(ourChunks(data, pol, kernel, feed), expected, what);
      }
    }
    references.push(expected);
  }
  return references;
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-chunker-'));
  await chunkrefPath();
});

after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('Chunker matches restic/chunker', () => {
  test('on inputs around the minimum size, fed in odd buffer sizes', async () => {
    const sizes = [0, 1, 64, minChunkSize - 65, minChunkSize - 64, minChunkSize - 1, minChunkSize, minChunkSize + 1];
    for (const size of sizes) {
      await assertSameChunks(seededBytes(`small ${size}`, size), polynomials, [MiB, 63, 64, 65, 4093]);
    }
  });

  test('on a few MiB, fed in buffers from 7 bytes up to the whole input', async () => {
    const data = seededBytes('a few MiB', 3 * MiB + 5);
    const references = await assertSameChunks(data, polynomials, [7, 64, 4093, 65537, MiB + 3, data.length]);
    // random data this long must have been cut by the fingerprint, not only at its end
    for (const chunks of references) assert.ok(chunks.length >= 2);
  });

  test('fed one byte at a time', async () => {
    const data = seededBytes('byte by byte', 2 * MiB + 500 * 1024);
    const [chunks] = await assertSameChunks(data, [polynomials[0]], [1]);
    assert.ok(chunks.length >= 2);
  });

  test('on 12 MiB with a freshly drawn polynomial', async () => {
    const data = seededBytes('12 MiB', 12 * MiB + 1);
    await assertSameChunks(data, [...polynomials, randomPolynomial()], [4093, 65537, data.length]);
  });

  test('on 40 MiB', async () => {
    const data = seededBytes('40 MiB', 40 * MiB + 3);
    const [chunks] = await assertSameChunks(data, [polynomials[0]], [MiB + 3]);
    assert.ok(chunks.length > 10);
  });

  test('on runs of zeros, which cut at the minimum size', async () => {
    const zeros = new Uint8Array(5 * MiB + 100);
    const mixed = Buffer.concat([seededBytes('before zeros', 2 * MiB), zeros, seededBytes('after zeros', 2 * MiB)]);
    for (const data of [zeros, mixed]) {
      const [chunks] = await assertSameChunks(data, polynomials, [65537, 1000003]);
      assert.ok(
        chunks.some((c) => c.length === minChunkSize),
        'the zero run produced minimum-size chunks',
      );
    }
  });

  test('on data without a boundary, which cuts at the maximum size', async () => {
    // a repeating 4 KiB pattern only ever shows the fingerprints of its 4096 windows; this seed has no boundary among them
    const pattern = seededBytes('no boundary', 4096);
    const data = new Uint8Array(20 * MiB + 10);
    for (let offset = 0; offset < data.length; offset += pattern.length)
      data.set(pattern.subarray(0, data.length - offset), offset);
    const [chunks] = await assertSameChunks(data, [polynomials[0]], [65537, data.length]);
    assert.ok(
      chunks.some((c) => c.length === maxChunkSize),
      'the pattern produced maximum-size chunks',
    );
  });
});

describe('Chunker', () => {
  test('reset starts a new stream', () => {
    // stop the first stream just before a boundary becomes possible, after its fingerprint has begun
    const abandoned = seededBytes('abandoned stream', minChunkSize - 10);
    const second = seededBytes('new stream', 3 * MiB);
    for (const kernel of kernels) {
      const chunker = new Chunker(polynomials[0], { kernel });
      assert.equal(chunker.next(abandoned), -1);
      chunker.reset();
      const cuts: number[] = [];
      for (let cut = chunker.next(second); cut >= 0; cut = chunker.next(second, cut)) cuts.push(cut);
      const fresh = ourChunks(second, polynomials[0], kernel, second.length).map((c) => c.offset + c.length);
      assert.deepEqual([...cuts, second.length], fresh, `${kernel} kernel`);
    }
  });

  test('rejects a start outside the buffer', () => {
    const chunker = new Chunker(polynomials[0]);
    assert.throws(() => chunker.next(new Uint8Array(10), 11), /from 11 is outside the 10-byte buffer/);
  });

  test('rejects polynomials whose degree is not 53', () => {
    assert.throws(() => new Chunker(0x11bn), /Chunker polynomial 11b has degree 8, not 53/);
  });
});
