// The progress scanner counts regular files and their bytes below each path (symlinks and folders are not files),
// marks the totals final, and stops early when aborted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newProgress } from '../../../src/engine/concurrency/progress.ts';
import { scanTotals } from '../../../src/engine/backup/scanner.ts';

test('totals: every regular file below the paths, in folders of any depth and size', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-scan-'));
  try {
    let bytes = 0;
    // more entries than one slice between event-loop turns, and a deep chain
    for (let i = 0; i < 600; i++) {
      await writeFile(join(dir, `f${i}`), 'x'.repeat(i % 7));
      bytes += i % 7;
    }
    await mkdir(join(dir, 'a/b/c'), { recursive: true });
    await writeFile(join(dir, 'a/b/c/deep'), 'hello');
    await symlink('f1', join(dir, 'link'));
    const single = join(dir, 'a/b/c/deep');
    const p = newProgress();
    await scanTotals([dir, single, join(dir, 'missing')], p);
    assert.deepEqual([p.filesTotal, p.bytesTotal, p.totalsFinal], [602, bytes + 10, true]);

    const ac = new AbortController();
    const partial = newProgress();
    const scanning = scanTotals([dir], partial, ac.signal);
    ac.abort();
    await scanning;
    assert.ok(partial.filesTotal < 601, `stopped early at ${partial.filesTotal} files`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
