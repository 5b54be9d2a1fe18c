// A block device backed up with changed-block tracking through the whole engine (pool workers, index, writer): the
// snapshot's content is what a full read writes, and only the tracked ranges are read.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import { backup, type BackupResult } from '../../../src/engine/operations/backup.ts';
import { decodeTree } from '../../../src/engine/tree/tree.ts';
import type { Repository } from '../../../src/engine/repository/repository.ts';
import type { BlockChanges } from '../../../src/engine/blocks/plan.ts';
import type { SnapshotEntry } from '../../../src/engine/operations/snapshots.ts';
import { randomBytes, testRepo } from '../../support/repo.ts';

const MiB = 1 << 20;
const size = 32 * MiB;

async function content(repo: Repository, r: BackupResult): Promise<string[]> {
  const [node] = decodeTree(await repo.loadBlob('tree', r.snapshot.tree));
  return node.content ?? [];
}

test('allocated-only first read, then a delta read of 1% changed, each with the content of a full read', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-block-'));
  try {
    const device = join(dir, 'disk');
    const data = Buffer.alloc(size);
    const allocated = [
      { offset: 0, length: 12 * MiB },
      { offset: 20 * MiB, length: 12 * MiB },
    ];
    for (const [i, a] of allocated.entries()) Buffer.from(randomBytes(a.length, i + 1)).copy(data, a.offset);
    await writeFile(device, data);
    const repo = await testRepo(new MemBackend());
    const run = (changes?: (p: SnapshotEntry | undefined) => Promise<BlockChanges>, parent?: SnapshotEntry) =>
      backup(repo, { paths: [device], stream: { name: 'disk.img', size, changes }, parent });

    const first = await run(async () => ({ allocated }));
    assert.deepEqual(first.archive.blockRead, { mode: 'allocated', bytesRead: 24 * MiB, size });
    const firstFull = await run();
    assert.deepEqual(await content(repo, first), await content(repo, firstFull));

    const changed = [
      { offset: 5 * MiB + 3, length: 100_000 },
      { offset: 21 * MiB, length: 4096 },
      { offset: size - 200_000, length: 200_000 },
    ];
    const fh = await open(device, 'r+');
    for (const [i, c] of changed.entries()) await fh.write(randomBytes(c.length, 100 + i), 0, c.length, c.offset);
    await fh.close();
    const parent = { id: first.snapshotID, snapshot: first.snapshot };
    const second = await run(async (p) => ({ changed: { since: p!.id, ranges: changed } }), parent);
    const full = await run();
    assert.deepEqual(await content(repo, second), await content(repo, full));
    assert.equal(second.archive.blockRead?.mode, 'changed');
    assert.ok(second.archive.blockRead!.bytesRead < size / 4, `read ${second.archive.blockRead!.bytesRead}`);

    // changes relative to another snapshot than the parent are not trusted: the allocated read takes over
    const stale = await run(async () => ({ changed: { since: 'f'.repeat(64), ranges: [] }, allocated }), parent);
    assert.equal(stale.archive.blockRead?.mode, 'allocated');
    assert.match(
      stale.archive.blockRead?.reason ?? '',
      /changed blocks not used: the changes are relative to snapshot ffffffff/,
    );
    assert.deepEqual(await content(repo, stale), await content(repo, full));
  } finally {
    await rm(dir, { recursive: true });
  }
});
