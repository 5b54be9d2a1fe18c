// Issue 4, end-to-end item 10: deleting a Completed DataUpload removes its repository snapshot and the data only
// it used; data shared with other snapshots stays, and restic check passes. Issue 28: the prune of a deletion waits
// for a DataDownload reading another backup of the namespace, and that restore gets the right bytes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { labels } from '../../src/shared/step-job/contract.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { randomBytes } from '../support/repo.ts';
import {
  boundClaim,
  claims,
  completedBackup,
  dataDownload,
  downloads,
  ferryNamespace,
  packBytes,
  pauseTransfer,
  reportProgressEvery,
  uploads,
  volumePath,
  watchUntil,
  world,
} from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let volume: string;
const mib = 1024 * 1024;

before(
  async () => {
    w = await world('delete', ({ app }) => ({ allowedNamespaces: [app] }));
    ({ path: volume } = await boundClaim(w.cluster, w.app, 'data', '256Mi'));
    await writeFile(join(volume, 'shared.bin'), randomBytes(8 * mib, 1));
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

const backup = (name: string): Promise<Obj> => completedBackup(w, w.app, name, 10 * 60_000);

/** The delete step's log line saying it waits for the repository's lock, or 'gone' once it forgot the snapshot. */
async function deleteStepWaited(uid: string): Promise<string> {
  const pods = `/api/v1/namespaces/${ferryNamespace}/pods?labelSelector=${encodeURIComponent(`${labels.uid}=${uid},${labels.step}=delete`)}`;
  for (const deadline = Date.now() + 5 * 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500))) {
    if ((await w.snapshotsOf(w.app)).every((e) => !e.snapshot.tags.includes(`ferry.dev/uid=${uid}`))) return 'gone';
    for (const pod of (await w.cluster.kube.get(pods)).items) {
      const line = (await w.cluster.podLogs(ferryNamespace, pod.metadata.name).catch(() => ''))
        .split('\n')
        .find((l) => l.includes('the repository is locked by'));
      if (line) return line;
    }
  }
  throw new Error('the delete step neither waited for the lock nor deleted the data within 5 minutes');
}

describe('deleting a DataUpload', { timeout: 30 * 60_000 }, () => {
  it('removes its snapshot and its unique data, keeps shared data, and leaves a clean repository', async (t) => {
    const kept = await backup('kept');
    await writeFile(join(volume, 'unique.bin'), randomBytes(6 * mib, 2));
    const doomed = await backup('doomed');
    const repo = await w.repository(w.app);
    const before = await packBytes(repo);

    await w.cluster.kube.delete(`${uploads(w.app)}/doomed`);
    await w.cluster.kube.waitFor(
      `${uploads(w.app)}?fieldSelector=metadata.name=doomed`,
      'the DataUpload to be gone',
      (list) => (list.items.length === 0 ? true : undefined),
      5 * 60_000,
    );

    const ids = (await w.snapshotsOf(w.app)).map((e) => e.id);
    assert.deepEqual(ids, [kept.status.snapshotID], 'only the kept snapshot remains');
    const freed = before - (await packBytes(repo));
    await repo.close();
    t.diagnostic(`deleting freed ${freed} bytes of packs (the unique file: ${6 * mib} random bytes)`);
    assert.ok(freed >= 5.5 * mib && freed <= 7 * mib, `freed ${freed} bytes`);
    await w.resticCheck(w.app, true);
    assert.equal(
      doomed.metadata.finalizers?.includes('ferry.dev/delete-repository-data'),
      true,
      "the deletion was held by ferry's finalizer",
    );
  });

  it('waits with its prune while a DataDownload reads another backup of the namespace; the restore gets the right bytes', async (t) => {
    // the wide backup's packs hold the narrow one's files between its own: once it is forgotten, a prune repacks
    // them and deletes the packs the restore of the narrow backup reads
    const pairs = 16;
    const name = (kind: string, i: number) => join(volume, `${String(i).padStart(2, '0')}-${kind}.bin`);
    for (let i = 0; i < pairs; i++) {
      await writeFile(name('a', i), randomBytes(1.5 * mib, 100 + i));
      await writeFile(name('b', i), randomBytes(3 * mib, 200 + i));
    }
    const wide = await backup('wide');
    for (let i = 0; i < pairs; i++) await rm(name('b', i));
    const narrow = await backup('narrow');

    // restores that take no lock are caught by their progress: reported often, it shows one that has begun
    await reportProgressEvery(w.cluster, 200);
    await w.cluster.kube.create(
      downloads(w.app),
      dataDownload('narrow-copy', w.location, {
        targetPVC: { name: 'restored-narrow' },
        source: { dataUpload: { name: 'narrow', namespace: w.app } },
      }),
    );
    const resume = await pauseTransfer(w, 'DataDownload', w.app, 'narrow-copy', w.app);
    try {
      await w.cluster.kube.delete(`${uploads(w.app)}/wide`);
      const said = await deleteStepWaited(wide.metadata.uid);
      t.diagnostic(`the delete step beside the paused restore: ${said}`);
      assert.notEqual(said, 'gone', 'the deleted backup was forgotten and pruned while the restore was reading');
    } finally {
      resume();
    }
    const { final } = await watchUntil(
      w.cluster,
      `${downloads(w.app)}/narrow-copy`,
      ['Completed', 'Failed', 'Canceled'],
      10 * 60_000,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    const pvc = await w.cluster.kube.get(`${claims(w.app)}/restored-narrow`);
    assert.deepEqual(await compareTrees(volume, await volumePath(w.cluster, pvc.spec.volumeName)), []);

    await w.cluster.kube.waitFor(
      `${uploads(w.app)}?fieldSelector=metadata.name=wide`,
      'the DataUpload to be gone',
      (list) => (list.items.length === 0 ? true : undefined),
      10 * 60_000,
    );
    assert.ok(
      !(await w.snapshotsOf(w.app)).some((e) => e.id === wide.status.snapshotID),
      'once the restore ended, the deletion went through',
    );
    assert.ok((await w.snapshotsOf(w.app)).some((e) => e.id === narrow.status.snapshotID));
    await w.resticCheck(w.app, true);
  });
});
