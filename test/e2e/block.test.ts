// Issue 4, end-to-end item 9: a block-mode PVC is backed up as one stream and restored into another namespace
// with identical bytes; its all-zero ranges cost no upload.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { open } from 'node:fs/promises';
import { randomBytes } from '../support/repo.ts';
import { restoreInto, sha } from './block-restore.ts';
import { boundClaim, dataUpload, settledLeftovers, summary, uploads, watchUntil, world } from './world.ts';
import type { World } from './world.ts';

let w: World & { app: string; other: string };
let device: string;
const mib = 1024 * 1024;
const size = 256 * mib;
/** data at these MiB offsets, zeros everywhere else */
const dataAt = [0, 1, 37, 128, 200, 255];

before(
  async () => {
    w = await world('block', ({ app, other }) => ({
      allowedNamespaces: [app, other],
      crossNamespaceRestores: [{ from: app, to: [other] }],
    }));
    ({ path: device } = await boundClaim(w.cluster, w.app, 'data', `${size / mib}Mi`, true));
    const fh = await open(device, 'r+');
    for (const at of dataAt) await fh.write(randomBytes(mib, at + 1), 0, mib, at * mib);
    await fh.close();
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

describe('block volume', { timeout: 30 * 60_000 }, () => {
  it('backs up as one stream whose zero ranges cost nothing, and restores identical bytes', async (t) => {
    await w.cluster.kube.create(uploads(w.app), dataUpload('disk', w.location));
    const up = (await watchUntil(w.cluster, `${uploads(w.app)}/disk`, ['Completed', 'Failed', 'Canceled'], 10 * 60_000))
      .final;
    assert.equal(up.status.phase, 'Completed', up.status.message);
    t.diagnostic(summary(up));
    assert.equal(up.status.volumeMode, 'Block');
    assert.equal(up.status.stats.bytes, size);
    const dataBytes = dataAt.length * mib;
    assert.ok(
      up.status.stats.bytesStored < dataBytes + 2 * mib,
      `stored ${up.status.stats.bytesStored} bytes for ${dataBytes} bytes of data in a ${size}-byte volume`,
    );
    const [entry] = (await w.snapshotsOf(w.app)).filter((e) => e.id === up.status.snapshotID);
    assert.deepEqual(entry.snapshot.paths, ['/data.img']);
    await w.resticCheck(w.app, true);

    const { down, pvc, path } = await restoreInto(
      w,
      { name: 'disk', namespace: w.app },
      w.other,
      'restored',
      10 * 60_000,
    );
    t.diagnostic(summary(down));
    assert.equal(pvc.spec.volumeMode, 'Block');
    assert.equal(await sha(path), await sha(device));
    assert.deepEqual(await settledLeftovers(w.cluster, up.metadata.uid), []);
    assert.deepEqual(await settledLeftovers(w.cluster, down.metadata.uid), []);
  });
});
