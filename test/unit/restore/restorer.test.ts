import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backup } from '../../../src/shared/backup/backup.ts';
import { restoreTree } from '../../../src/shared/restore/restorer.ts';
import { listSnapshots } from '../../../src/shared/repository/snapshots.ts';
import { makeFixtureTree } from '../../support/fixture-tree.ts';
import { compareTrees } from '../../support/compare-tree.ts';
import { testRepo } from '../../support/repo.ts';
import { CountingBackend } from './counting-backend.ts';

const work = await mkdtemp(join(tmpdir(), 'ferry-restorer-'));
test.after(() => rm(work, { recursive: true, force: true }));

test('a restore reads each pack a few times, not once per file or directory, and reproduces the tree', async () => {
  const source = join(work, 'source');
  await makeFixtureTree(source, { smallFiles: 600 });
  const backend = new CountingBackend();
  const repo = await testRepo(backend);
  const { snapshotID } = await backup(repo, { paths: [source] });
  const tree = (await listSnapshots(repo)).find((e) => e.id === snapshotID)!.snapshot.tree;
  const packs = repo.index.packs().length;
  // blobs opened on this thread (the default) and on worker threads
  for (const workers of [0, 2]) {
    backend.packReads = 0;
    const target = join(work, `restored-${workers}`);
    const progress = await restoreTree(repo, tree, { target, workers });
    assert.deepEqual(await compareTrees(source, join(target, source), { mtimeToleranceNs: 1000n }), []);
    assert.ok(progress.filesDone > 600);
    // one read per pack when every request waits at once; the walk's pace splits a few (measured: 7 for 2 packs),
    // where one read per blob would be over 600
    assert.ok(backend.packReads <= 5 * packs, `${backend.packReads} reads for ${packs} packs and ${progress.filesDone} files`);
  }
});
