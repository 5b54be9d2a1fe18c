// Issue 4, end-to-end item 4: a cancel during the transfer ends in Canceled within 10 seconds, leaves no exposure
// objects, Jobs or native snapshot behind, and no snapshot of the DataUpload in the repository.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from '../support/repo.ts';
import { boundClaim, dataUpload, settledLeftovers, snapshots, uploads, watchUntil, world } from './world.ts';
import type { World } from './world.ts';

let w: World & { app: string; other: string };
const mib = 1024 * 1024;

before(
  async () => {
    w = await world('cancel', ({ app }) => ({ allowedNamespaces: [app] }));
    const { path } = await boundClaim(w.cluster, w.app, 'data', '1Gi');
    // enough incompressible data that the transfer takes a while on a shared 2-core machine
    for (let i = 0; i < 24; i++) {
      await mkdir(join(path, `d${i % 4}`), { recursive: true });
      await writeFile(join(path, `d${i % 4}`, `f${i}.bin`), randomBytes(16 * mib, 1000 + i));
    }
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

describe('cancel', { timeout: 20 * 60_000 }, () => {
  it('during transfer: Canceled within 10 s, nothing left behind, no snapshot in the repository', async (t) => {
    await w.cluster.kube.create(uploads(w.app), dataUpload('canceled', w.location));
    const path = `${uploads(w.app)}/canceled`;
    const moving = await w.cluster.kube.waitFor(
      path,
      'the transfer to move data',
      (du) =>
        du.status?.phase === 'InProgress' && (du.status?.progress?.bytesDone ?? 0) > 0
          ? du
          : du.status?.phase === 'Completed' || du.status?.phase === 'Failed'
            ? du
            : undefined,
      10 * 60_000,
    );
    assert.equal(
      moving.status.phase,
      'InProgress',
      `the transfer ended before it could be canceled: ${JSON.stringify(moving.status)}`,
    );
    const asked = Date.now();
    await w.cluster.kube.patch(path, { spec: { cancel: true } });
    const { final, seen } = await watchUntil(w.cluster, path, ['Canceled', 'Completed', 'Failed'], 60_000);
    const took = Date.now() - asked;
    assert.equal(
      final.status.phase,
      'Canceled',
      `${final.status.message}; went through ${seen.map((s) => s.phase).join(' > ')}`,
    );
    t.diagnostic(
      `Canceled ${took} ms after the cancel request, ${moving.status.progress.bytesDone} bytes into the transfer`,
    );
    assert.ok(took <= 10_000, `Canceled ${took} ms after the cancel request`);
    assert.equal(final.status.snapshotID, undefined);
    assert.ok(final.status.completionTimestamp);
    const uid: string = final.metadata.uid;
    assert.deepEqual(await settledLeftovers(w.cluster, uid), []);
    assert.equal(
      await w.cluster.kube.find(`${snapshots(w.app)}/ferry-${uid}`),
      undefined,
      'the native snapshot is deleted',
    );
    assert.ok(
      !(await w.snapshotsOf(w.app)).some((e) => e.snapshot.tags.includes(`ferry.dev/uid=${uid}`)),
      'no snapshot of the canceled backup',
    );
    await w.resticCheck(w.app, false);
  });
});
