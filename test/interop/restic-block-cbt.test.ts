// Changed-block tracking against the real restic as the oracle: a block device backed up by ferry reading only its
// allocated, then only its changed ranges gives the same file content (blob for blob) as restic reading the whole
// device from stdin into the same repository; restic checks the data and dumps the device byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FsBackend } from '../../src/engine/backend/fs.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { backup } from '../../src/engine/operations/backup.ts';
import { listSnapshots } from '../../src/engine/repository/snapshots.ts';
import { decodeTree } from '../../src/engine/tree/tree.ts';
import type { BlockChanges } from '../../src/engine/blocks/plan.ts';
import type { SnapshotEntry } from '../../src/engine/snapshot/select.ts';
import { restic } from '../support/restic.ts';
import { randomBytes, testKDF, testPassword, testPolynomial } from '../support/repo.ts';

const MiB = 1 << 20;

test('allocated-only and changed-only reads store what restic stores reading the whole device', async () => {
  const work = await mkdtemp(join(tmpdir(), 'ferry-cbt-interop-'));
  try {
    const path = join(work, 'repo');
    // restic's test polynomial, not a random one: the chunks around a change (512 KiB to 8 MiB) and so the bytes
    // re-chunked depend on it, and a random one now and then cut chunks long enough to pass the bound below
    const repo = await Repository.init(new FsBackend(path), testPassword, { kdf: testKDF, polynomial: testPolynomial });
    const device = join(work, 'disk');
    const size = 40 * MiB;
    const data = Buffer.alloc(size);
    const allocated = [
      { offset: 0, length: 9 * MiB },
      { offset: 16 * MiB, length: 20 * MiB },
    ];
    for (const [i, a] of allocated.entries()) Buffer.from(randomBytes(a.length, i + 7)).copy(data, a.offset);
    await writeFile(device, data);
    const run = (changes: (p: SnapshotEntry | undefined) => Promise<BlockChanges>, parent?: SnapshotEntry) =>
      backup(repo, { paths: [device], stream: { name: 'disk.img', size, changes }, parent });
    const first = await run(async () => ({ allocated }));
    assert.equal(first.archive.blockRead?.bytesRead, 29 * MiB);

    const changed = [
      { offset: 2 * MiB + 5, length: 300_000 },
      { offset: 30 * MiB, length: 4096 },
    ];
    const fh = await open(device, 'r+');
    for (const [i, c] of changed.entries()) await fh.write(randomBytes(c.length, 50 + i), 0, c.length, c.offset);
    await fh.close();
    const parent = { id: first.snapshotID, snapshot: first.snapshot };
    const second = await run(async (p) => ({ changed: { since: p!.id, ranges: changed } }), parent);
    assert.equal(second.archive.blockRead?.mode, 'changed');
    assert.ok(second.archive.blockRead!.bytesRead < size / 4, `read ${second.archive.blockRead!.bytesRead}`);

    await restic({ repo: path }, [
      'backup',
      '--stdin-filename',
      'disk.img',
      '--stdin-from-command',
      '--',
      'cat',
      device,
    ]);
    await repo.loadIndex();
    const snapshots = await listSnapshots(repo);
    const byRestic = snapshots.find((s) => s.snapshot.programVersion?.startsWith('restic'));
    assert.ok(byRestic, 'restic saved a snapshot');
    const content = async (tree: string): Promise<string[]> =>
      decodeTree(await repo.loadBlob('tree', tree))[0].content ?? [];
    assert.deepEqual(await content(second.snapshot.tree), await content(byRestic.snapshot.tree));

    await restic({ repo: path }, ['check', '--read-data']);
    const target = join(work, 'restored');
    await restic({ repo: path }, ['restore', second.snapshotID, '--target', target]);
    const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
    assert.equal(sha(await readFile(join(target, 'disk.img'))), sha(await readFile(device)));
  } finally {
    await rm(work, { recursive: true, force: true });
  }
});
