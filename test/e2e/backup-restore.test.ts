// Issue 4, end-to-end items 1-3 on the cluster in a box: a filesystem PVC with thousands of files of every kind is
// backed up by a DataUpload (progress seen rising, restic check --read-data clean, nothing left behind, the native
// snapshot gone or kept as snapshotMoveData says), restored by a DataDownload into another namespace (identical
// content and metadata; the target PVC binds only once the data is complete), refused where the location does not
// allow it, and backed up again after a 1% change (about 1% uploaded, parent recorded).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { compareTrees } from '../support/compare-tree.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { KubeError } from '../support/cluster.ts';
import { randomBytes } from '../support/repo.ts';
import {
  boundClaim,
  claims,
  dataDownload,
  dataUpload,
  downloads,
  reportProgressEvery,
  settledLeftovers,
  snapshots,
  summary,
  uploads,
  volumePath,
  watchUntil,
  world,
} from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let denied: string;
let source: { pv: string; path: string };
let first: Obj;
const mib = 1024 * 1024;
const phaseTimeoutMs = 10 * 60_000;

before(
  async () => {
    w = await world('backup', ({ app, other }) => ({
      allowedNamespaces: [app, other],
      crossNamespaceRestores: [{ from: app, to: [other] }],
    }));
    denied = await w.namespace('denied');
    source = await boundClaim(w.cluster, w.app, 'data', '512Mi');
    await makeFixtureTree(source.path, { smallFiles: 3000, bigFile: 64 * mib, seed: 7 });
    // the transfer of this data takes about a second: reports a fifth of a second apart see it rise several times
    await reportProgressEvery(w.cluster, 200);
  },
  { timeout: 60 * 60_000 },
);
after(() => w?.cluster.cleanup());

describe('backup of a filesystem PVC', { timeout: 30 * 60_000 }, () => {
  it('reaches Completed with progress seen rising, a clean repository and nothing left behind', async (t) => {
    await w.cluster.kube.create(uploads(w.app), dataUpload('full', w.location));
    const { final, seen } = await watchUntil(
      w.cluster,
      `${uploads(w.app)}/full`,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    t.diagnostic(summary(final));
    first = final;
    const phases = [...new Set(seen.map((s) => s.phase))];
    assert.deepEqual(
      phases.filter((p) => p !== 'New'),
      ['Accepted', 'Prepared', 'InProgress', 'Finalizing', 'Completed'].filter((p) => phases.includes(p)),
    );
    const rising = [
      ...new Set(seen.filter((s) => s.phase === 'InProgress' && (s.bytesDone ?? 0) > 0).map((s) => s.bytesDone)),
    ];
    assert.ok(
      rising.length >= 2,
      `progress seen during the transfer: ${JSON.stringify(seen.filter((s) => s.phase === 'InProgress'))}`,
    );
    assert.ok(
      rising.every((v, i) => i === 0 || v! > rising[i - 1]!),
      'progress only rises',
    );
    assert.ok(final.status.stats.files > 3000, JSON.stringify(final.status.stats));
    assert.match(final.status.snapshotID, /^[0-9a-f]{64}$/);

    const [snap] = (await w.snapshotsOf(w.app)).filter((e) => e.id === final.status.snapshotID);
    assert.ok(snap, 'the recorded snapshot is in the repository');
    assert.ok(snap.snapshot.tags.includes(`ferry.dev/uid=${final.metadata.uid}`));
    await w.resticCheck(w.app, true);

    assert.deepEqual(await settledLeftovers(w.cluster, final.metadata.uid), []);
    assert.equal(
      await w.cluster.kube.find(`${snapshots(w.app)}/ferry-${final.metadata.uid}`),
      undefined,
      'the native snapshot is deleted once the data moved',
    );
    const reasons = (
      await w.cluster.kube.get(
        `/apis/events.k8s.io/v1/namespaces/${w.app}/events?fieldSelector=${encodeURIComponent(`regarding.uid=${final.metadata.uid}`)}`,
      )
    ).items.map((e: Obj) => e.reason);
    for (const r of ['SnapshotReady', 'Exposed', 'TransferStarted', 'DataMoved', 'Completed'])
      assert.ok(reasons.includes(r), `event ${r} among ${reasons.join(', ')}`);
  });

  it('with snapshotMoveData false keeps the native snapshot as the backup and writes nothing to the repository', async () => {
    await w.cluster.kube.create(uploads(w.app), dataUpload('snapshot-only', w.location, { snapshotMoveData: false }));
    const { final } = await watchUntil(
      w.cluster,
      `${uploads(w.app)}/snapshot-only`,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    assert.equal(final.status.snapshotID, undefined);
    const vs = await w.cluster.kube.get(`${snapshots(w.app)}/${final.status.volumeSnapshot}`);
    assert.equal(vs.status.readyToUse, true);
    assert.ok(
      !(await w.snapshotsOf(w.app)).some((e) => e.snapshot.tags.includes(`ferry.dev/uid=${final.metadata.uid}`)),
    );
    assert.deepEqual(await settledLeftovers(w.cluster, final.metadata.uid), []);
  });
});

describe('restore into another namespace', { timeout: 30 * 60_000 }, () => {
  it('gives identical content and metadata, and the PVC binds only once the data is complete', async (t) => {
    assert.ok(first, 'needs the backup of the first test');
    await w.cluster.kube.create(
      downloads(w.other),
      dataDownload('copy', w.location, {
        targetPVC: { name: 'restored' },
        source: { dataUpload: { name: 'full', namespace: w.app } },
      }),
    );
    const target = async () => (await w.cluster.kube.find(`${claims(w.other)}/restored`))?.status?.phase ?? 'absent';
    const { final, seen } = await watchUntil(
      w.cluster,
      `${downloads(w.other)}/copy`,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
      target,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    t.diagnostic(summary(final));
    const early = seen.filter((s) => ['New', 'Prepared', 'InProgress'].includes(s.phase) && s.extra === 'Bound');
    assert.deepEqual(early, [], 'the target PVC was bound before the data was complete');
    assert.ok(
      seen.some((s) => s.phase === 'InProgress'),
      'the restore was watched while it ran',
    );
    const pvc = await w.cluster.kube.get(`${claims(w.other)}/restored`);
    assert.equal(pvc.status.phase, 'Bound');
    assert.deepEqual(await compareTrees(source.path, await volumePath(w.cluster, pvc.spec.volumeName)), []);
    assert.deepEqual(await settledLeftovers(w.cluster, final.metadata.uid), []);
  });

  it('is refused where the location does not allow the namespace to read the backup', async () => {
    try {
      await w.cluster.kube.create(
        downloads(denied),
        dataDownload('not-allowed', w.location, { source: { dataUpload: { name: 'full', namespace: w.app } } }),
      );
      assert.fail('a DataDownload into a namespace the location does not allow was accepted');
    } catch (err) {
      assert.ok(err instanceof KubeError && err.status >= 400 && err.status < 500, String(err));
      assert.match(err.message, new RegExp(`${w.location}|${denied}`));
    }
  });
});

describe('incremental backup', { timeout: 30 * 60_000 }, () => {
  it('after changing 1% of the data uploads about 1% and records its parent', async (t) => {
    assert.ok(first, 'needs the backup of the first test');
    const total: number = first.status.stats.bytes;
    const changed = Math.round(total * 0.01);
    const fh = await open(join(source.path, 'big.bin'), 'r+');
    await fh.write(randomBytes(changed, 99), 0, changed, 20 * mib);
    await fh.close();
    await w.cluster.kube.create(uploads(w.app), dataUpload('second', w.location));
    const { final } = await watchUntil(
      w.cluster,
      `${uploads(w.app)}/second`,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    t.diagnostic(summary(final));
    assert.equal(final.status.parentSnapshotID, first.status.snapshotID);
    // what is new is the changed bytes plus the rest of the chunks they touch. Where chunks end depends on the
    // repository's random polynomial: measured over 9 repositories, 0.9 to 4.0 MiB more than the change (restic's
    // data_added on the same repositories was identical), so 4 MiB failed now and then. Re-uploading the file
    // would add 64 MiB.
    const added: number = final.status.stats.bytesAdded;
    assert.ok(
      added >= changed && added <= changed + 12 * mib,
      `added ${added} bytes after changing ${changed} of ${total}`,
    );
    await w.resticCheck(w.app, false);
  });
});
