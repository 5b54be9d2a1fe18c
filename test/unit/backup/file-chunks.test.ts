import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Chunker } from '../../../src/engine/chunker/chunker.ts';
import { parsePolynomial } from '../../../src/engine/chunker/polynomial.ts';
import { fileChunks } from '../../../src/engine/backup/file-chunks.ts';

const chunker = new Chunker(parsePolynomial('3da3358b4dc173'));

async function read(path: string): Promise<{ data: Buffer; buffers: Set<ArrayBufferLike> }> {
  const parts: Buffer[] = [];
  const buffers = new Set<ArrayBufferLike>();
  for await (const c of fileChunks(path, chunker)) {
    parts.push(Buffer.from(c.data));
    buffers.add(c.data.buffer);
  }
  return { data: Buffer.concat(parts), buffers };
}

test('files read one after another reuse one read buffer, even after a reader stopped early, and read whole', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-chunks-'));
  try {
    const contents = [randomBytes(3 << 20), randomBytes(100), randomBytes(2 << 20)];
    for (const [i, c] of contents.entries()) await writeFile(join(dir, `f${i}`), c);
    const first = await read(join(dir, 'f0'));
    assert.deepEqual(first.data, contents[0]);
    // a consumer that leaves after the first chunk still gives the buffer back
    for await (const c of fileChunks(join(dir, 'f2'), chunker)) {
      assert.equal(c.data.buffer, [...first.buffers][0]);
      break;
    }
    for (const i of [1, 2]) {
      const r = await read(join(dir, `f${i}`));
      assert.deepEqual(r.data, contents[i]);
      assert.deepEqual(r.buffers, first.buffers);
    }
  } finally {
    await rm(dir, { recursive: true });
  }
});
