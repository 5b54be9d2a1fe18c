import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { chunkStream } from '../../../src/engine/chunker/chunker.ts';
import { refChunks } from '../../support/chunkref.ts';
import type { RefChunk } from '../../support/chunkref.ts';
import { seededBytes } from './seeded-bytes.ts';

const pol = 0x3da3358b4dc173n;

/**
 * Yields `data` in pieces of varying odd sizes, always through the same buffer, as a reader reusing its buffer would;
 * a Buffer when `node` (whose slice() is a view, not a copy, as a file read hands over).
 */
async function* reusedBuffer(data: Uint8Array, sizes: number[], node = false): AsyncGenerator<Uint8Array> {
  const length = Math.max(...sizes);
  const buffer = node ? Buffer.alloc(length) : new Uint8Array(length);
  for (let offset = 0, i = 0; offset < data.length; i++) {
    const size = Math.min(sizes[i % sizes.length], data.length - offset);
    buffer.set(data.subarray(offset, offset + size));
    yield buffer.subarray(0, size);
    buffer.fill(0xee); // whatever the consumer kept of the previous piece must not change
    offset += size;
  }
}

async function collect(source: AsyncIterable<Uint8Array>): Promise<RefChunk[]> {
  const chunks: RefChunk[] = [];
  let offset = 0;
  for await (const chunk of chunkStream(source, pol)) {
    chunks.push({ offset, length: chunk.length, sha256: createHash('sha256').update(chunk).digest('hex') });
    offset += chunk.length;
  }
  return chunks;
}

test('chunkStream yields the chunks restic cuts, the last partial one included', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-chunk-stream-'));
  try {
    for (const size of [5 * 1024 * 1024 + 77, 300_000]) {
      const data = seededBytes(`stream ${size}`, size);
      const file = join(dir, `input-${size}`);
      await writeFile(file, data);
      const expected = await refChunks(pol, file);
      assert.deepEqual(await collect(reusedBuffer(data, [65536, 1, 1_000_003, 4093])), expected, `${size} bytes`);
      assert.deepEqual(
        await collect(reusedBuffer(data, [65536, 1, 1_000_003, 4093], true)),
        expected,
        `${size} bytes from a Buffer`,
      );
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('chunkStream yields nothing for an empty stream', async () => {
  assert.deepEqual(await collect(reusedBuffer(new Uint8Array(0), [10])), []);
});
