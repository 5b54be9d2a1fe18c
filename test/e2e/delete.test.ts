// Issue 4, end-to-end item 10: deleting a Completed DataUpload removes its repository snapshot and the data only
// it used; data shared with other snapshots stays, and restic check passes.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from '../support/repo.ts';
import { boundClaim, completedBackup, packBytes, uploads, world } from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let volume: string;
const mib = 1024 * 1024;

before(async () => {
  w = await world('delete', ({ app }) => ({ allowedNamespaces: [app] }));
  ({ path: volume } = await boundClaim(w.cluster, w.app, 'data', '128Mi'));
  await writeFile(join(volume, 'shared.bin'), randomBytes(8 * mib, 1));
}, { timeout: 30 * 60_000 });
after(() => w?.cluster.cleanup());

const backup = (name: string): Promise<Obj> => completedBackup(w, w.app, name, 10 * 60_000);

describe('deleting a DataUpload', { timeout: 30 * 60_000 }, () => {
  it('removes its snapshot and its unique data, keeps shared data, and leaves a clean repository', async (t) => {
    const kept = await backup('kept');
    await writeFile(join(volume, 'unique.bin'), randomBytes(6 * mib, 2));
    const doomed = await backup('doomed');
    const repo = await w.repository(w.app);
    const before = await packBytes(repo);

    await w.cluster.kube.delete(`${uploads(w.app)}/doomed`);
    await w.cluster.kube.waitFor(`${uploads(w.app)}?fieldSelector=metadata.name=doomed`, 'the DataUpload to be gone', (list) => (list.items.length === 0 ? true : undefined), 5 * 60_000);

    const ids = (await w.snapshotsOf(w.app)).map((e) => e.id);
    assert.deepEqual(ids, [kept.status.snapshotID], 'only the kept snapshot remains');
    const freed = before - (await packBytes(repo));
    await repo.close();
    t.diagnostic(`deleting freed ${freed} bytes of packs (the unique file: ${6 * mib} random bytes)`);
    assert.ok(freed >= 5.5 * mib && freed <= 7 * mib, `freed ${freed} bytes`);
    await w.resticCheck(w.app, true);
    assert.equal(doomed.metadata.finalizers?.includes('ferry.dev/delete-repository-data'), true, 'the deletion was held by ferry\'s finalizer');
  });
});
