// The restore floor the suite reports (bench/kernels.ts): a copy of a dataset into a filesystem made for it, as the
// restores get, leaving nothing behind in the work folder.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { copyTreeRate } from '../kernels.ts';

test('copies a tree into a fresh ext4 when run as root, and removes the filesystem after', async () => {
  const root = await mkdtemp(join(tmpdir(), 'copy-kernel-'));
  try {
    const path = join(root, 'data');
    await mkdir(join(path, 'a', 'b'), { recursive: true });
    const files = 50;
    for (let i = 0; i < files; i++)
      await writeFile(join(path, i % 2 ? 'a' : join('a', 'b'), `f${i}`), Buffer.alloc(4096, i));
    const work = join(root, 'work');
    const copied = await copyTreeRate({ path, bytes: files * 4096, files, work });
    assert.ok(Number.isFinite(copied.bytesPerSecond) && copied.bytesPerSecond > 0, `rate ${copied.bytesPerSecond}`);
    assert.equal(copied.on, process.getuid?.() === 0 ? 'fresh ext4' : 'work folder');
    assert.deepEqual(await readdir(work), []);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
