import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { warm } from '../measure/warm.ts';

test('warm reads every regular file of a tree to its end, nested folders included, and a single file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-warm-'));
  try {
    await mkdir(join(dir, 'a', 'b'), { recursive: true });
    await writeFile(join(dir, 'top'), Buffer.alloc(3 << 20, 1));
    await writeFile(join(dir, 'a', 'b', 'deep'), 'x'.repeat(100));
    await writeFile(join(dir, 'a', 'empty'), '');
    // a link is not followed: its target is read where it lies, once
    await symlink(join(dir, 'top'), join(dir, 'a', 'link'));
    assert.equal(warm(dir), (3 << 20) + 100);
    assert.equal(warm(join(dir, 'a', 'b', 'deep')), 100);
    assert.throws(() => warm(join(dir, 'missing')), { code: 'ENOENT' });
  } finally {
    await rm(dir, { recursive: true });
  }
});
