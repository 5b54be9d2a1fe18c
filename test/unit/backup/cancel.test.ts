import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import { listSnapshots } from '../../../src/engine/repository/snapshots.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';

test('a canceled backup stops within a second, leaving no snapshot and no lock', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-cancel-'));
  try {
    for (let i = 0; i < 4; i++) await writeFile(join(dir, `big-${i}`), randomBytes(24 << 20, i + 1));
    const repo = await testRepo(new MemBackend());
    const ac = new AbortController();
    let abortedAt = 0;
    const run = backup(repo, {
      paths: [dir],
      signal: ac.signal,
      onProgress: (p) => {
        if (p.bytesDone > 0 && abortedAt === 0) {
          abortedAt = Date.now();
          ac.abort(Object.assign(new Error('canceled by the test'), { name: 'AbortError' }));
        }
      },
    });
    await assert.rejects(run, (err: Error) => err.name === 'AbortError');
    assert.ok(abortedAt > 0, 'the backup had started moving data');
    assert.ok(Date.now() - abortedAt < 1000, `stopped ${Date.now() - abortedAt} ms after the cancel`);
    assert.deepEqual(await listSnapshots(repo), []);
    const locks: string[] = [];
    for await (const id of repo.list('lock')) locks.push(id);
    assert.deepEqual(locks, []);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
