// Issue 34: a block volume's incremental backup through the CSI driver's SnapshotMetadataService (the box's driver
// serves it through the real csi-snapshot-metadata sidecar). After 1% of a 2 GiB volume changed, the incremental
// reads about 1% of it (counted by the transfer and reported in status.changeTracking), the first backup reads only
// the allocated blocks, the CSI snapshot kept as the base moves on to the newest backup, and the restored device is
// identical to the source.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { open } from 'node:fs/promises';
import { restoreInto, sha } from './block-restore.ts';
import { boundClaim, completedBackup, settledLeftovers, summary, world } from './world.ts';
import type { World } from './world.ts';

let w: World & { app: string; other: string };
let device: string;
const mib = 1024 * 1024;
const size = 2048 * mib;
/** the first 1792 MiB hold data, the rest was never written */
const written = 1792 * mib;
/** 1% of the volume, in four places */
const changes = [3, 700, 1500, 2040].map((m) => ({ offset: m * mib + 12_345, length: 5 * mib }));

before(
  async () => {
    w = await world('block-cbt', ({ app, other }) => ({
      allowedNamespaces: [app, other],
      crossNamespaceRestores: [{ from: app, to: [other] }],
    }));
    ({ path: device } = await boundClaim(w.cluster, w.app, 'data', `${size / mib}Mi`, true));
    const fh = await open(device, 'r+');
    for (let at = 0; at < written; at += 64 * mib) await fh.write(randomBytes(64 * mib), 0, 64 * mib, at);
    await fh.close();
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

async function contentExists(name: string): Promise<boolean> {
  return (await w.cluster.kube.find(`/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents/${name}`)) !== undefined;
}

/** The driver's sidecar deletes the storage snapshot before the content goes: that takes a moment. */
async function contentGone(name: string): Promise<boolean> {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 500)))
    if (!(await contentExists(name))) return true;
  return false;
}

describe('block volume with changed-block tracking', { timeout: 40 * 60_000 }, () => {
  it('reads only allocated blocks first, then about 1% after 1% changed, and restores identical bytes', async (t) => {
    const first = await completedBackup(w, w.app, 'first');
    t.diagnostic(summary(first));
    const ct1 = first.status.changeTracking;
    assert.equal(ct1.mode, 'Allocated', JSON.stringify(ct1));
    assert.ok(ct1.bytesRead <= written + 8 * mib, `first backup read ${ct1.bytesRead} bytes`);
    assert.ok(ct1.retainedContent && (await contentExists(ct1.retainedContent)), JSON.stringify(ct1));

    const fh = await open(device, 'r+');
    for (const c of changes) await fh.write(randomBytes(c.length), 0, c.length, c.offset);
    await fh.close();

    const second = await completedBackup(w, w.app, 'second');
    t.diagnostic(summary(second));
    const ct2 = second.status.changeTracking;
    assert.equal(ct2.mode, 'Changed', JSON.stringify(ct2));
    assert.equal(second.status.parentSnapshotID, first.status.snapshotID);
    const changed = changes.reduce((n, c) => n + c.length, 0);
    assert.ok(
      ct2.bytesRead >= changed && ct2.bytesRead <= 0.03 * size,
      `read ${ct2.bytesRead} bytes after ${changed} changed in ${size}`,
    );
    assert.equal(second.status.stats.bytes, size);
    // the base moved on: the first backup's kept snapshot is gone, the second's is kept
    const firstNow = await w.cluster.kube.get(`/apis/ferry.dev/v1alpha1/namespaces/${w.app}/datauploads/first`);
    assert.equal(firstNow.status.changeTracking?.retainedContent, undefined);
    assert.ok(await contentGone(ct1.retainedContent), `content ${ct1.retainedContent} is still there`);
    assert.ok(await contentExists(ct2.retainedContent));
    await w.resticCheck(w.app, true);

    const { down, path } = await restoreInto(w, { name: 'second', namespace: w.app }, w.other, 'restored', 20 * 60_000);
    t.diagnostic(summary(down));
    assert.equal(await sha(path), await sha(device));
    assert.deepEqual(await settledLeftovers(w.cluster, second.metadata.uid), []);
  });
});
