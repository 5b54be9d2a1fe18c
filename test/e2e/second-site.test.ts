// A second site (issue 33): site A backs up on a schedule and a CopyPolicy copies each backup into a location on
// site B's MinIO; with site A's cluster and MinIO gone, site B's cluster finds the backups in that location (backup
// sync) and restores one into a new PVC. Copies resume after a kill without re-sending, a copy into a location that
// does not allow the namespace is refused, expiry on A treats copies as the policy says, and on an Object Lock
// location the latest copy survives an attacker holding the location's own keys.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { secondSitePaths } from '../cluster/second-site.ts';
import { until, volumeFile } from '../cluster/testing.ts';
import { ferryOK } from '../support/ferry-cli.ts';
import { ferryNamespace } from '../support/ferry-install.ts';
import { twoSites, type TwoSites } from './two-sites.ts';
import { api, boundClaim, claims, dataDownload, downloads, stepPids, uploads, watchUntil, type Obj } from './world.ts';

let w: TwoSites;
const copiesPath = (ns: string): string => `${api}/namespaces/${ns}/datacopies`;
const policies = `${api}/namespaces/${ferryNamespace}/copypolicies`;
const schedules = (ns: string): string => `${api}/namespaces/${ns}/backupschedules`;
const seconds = (from: string, to: string): number => (Date.parse(to) - Date.parse(from)) / 1000;

before(async () => {
  w = await twoSites('second-site');
});
after(() => w?.cleanup());

/** The DataCopy of DataUpload `du` into `location` (made by a policy or by hand), once it ended. */
async function endedCopyOf(du: string, location: string, timeoutMs = 5 * 60_000): Promise<Obj> {
  return until(`a DataCopy of ${du} into ${location} to end`, timeoutMs, async () => {
    const list = (await w.a.kube.get(copiesPath(w.ns))).items as Obj[];
    const copy = list.find((c) => c.spec.dataUpload === du && c.spec.backupStorageLocation === location);
    return copy && ['Completed', 'Failed', 'Canceled'].includes(copy.status?.phase) ? copy : undefined;
  });
}

async function completedUploads(schedule: string): Promise<Obj[]> {
  const list = (await w.a.kube.get(`${uploads(w.ns)}?labelSelector=ferry.dev/schedule=${schedule}`)).items as Obj[];
  return list
    .filter((d) => d.status?.phase === 'Completed')
    .sort((x, y) => Date.parse(x.status.completionTimestamp) - Date.parse(y.status.completionTimestamp));
}

const files = { 'a.txt': 'first site\n', 'nested/b.bin': randomBytes(6 << 20) };
let source = '';

describe('second site', () => {
  it('copies each scheduled backup within a minute, the second copy sending only what changed', async () => {
    ({ path: source } = await boundClaim(w.a, w.ns, 'data', '64Mi'));
    for (const [name, data] of Object.entries(files)) {
      await mkdir(join(source, name, '..'), { recursive: true });
      await writeFile(join(source, name), data);
    }
    await w.a.kube.create(policies, {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'CopyPolicy',
      metadata: { name: `to-b-${w.id}` },
      spec: {
        sourceLocation: w.primary,
        destinationLocation: w.copies,
        namespaces: [w.ns],
        schedules: ['every-minute'],
      },
    });
    await w.a.kube.create(schedules(w.ns), {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name: 'every-minute' },
      spec: { schedule: '* * * * *', pvcs: ['data'], backupStorageLocation: w.primary },
    });
    const received = [await w.receivedByB()];
    const copies: Obj[] = [];
    for (const n of [1, 2]) {
      const du = await until(
        `scheduled backup ${n}`,
        4 * 60_000,
        async () => (await completedUploads('every-minute'))[n - 1],
      );
      const copy = await endedCopyOf(du.metadata.name, w.copies);
      assert.equal(copy.status.phase, 'Completed', JSON.stringify(copy.status));
      received.push(await w.receivedByB());
      copies.push(copy);
      // a copy starts from the completed backup within a minute (the sweep's period) and ends soon after
      const wait = seconds(du.status.completionTimestamp, copy.status.startTimestamp);
      assert.ok(wait < 60, `the copy of backup ${n} started ${wait} s after it completed`);
      const recorded = (await w.a.kube.get(`${uploads(w.ns)}/${du.metadata.name}`)).status.copies ?? [];
      assert.deepEqual(
        recorded.map((c: Obj) => [c.backupStorageLocation, c.phase, c.snapshotID]),
        [[w.copies, 'Completed', copy.status.snapshotID]],
      );
      if (n === 1) await writeFile(join(source, 'changed.txt'), 'only this is new\n');
    }
    await w.a.kube.patch(`${schedules(w.ns)}/every-minute`, { spec: { suspend: true } });
    const first = received[1] - received[0];
    const second = received[2] - received[1];
    assert.ok(first > 6 << 20, `the first copy sent ${first} bytes`);
    assert.ok(second < first / 10, `the second copy sent ${second} bytes against the first's ${first}`);
    const inB = await w.snapshotsInB(w.copies);
    assert.deepEqual(inB.map((e) => e.id).sort(), copies.map((c) => c.status.snapshotID).sort());
  });

  it("restores on site B with site A's cluster and MinIO gone: the backups appear there, restic checks the data", async () => {
    const latest = (await completedUploads('every-minute')).at(-1)!;
    const name = latest.metadata.name;
    await w.b.kube.patch(`${api}/namespaces/${ferryNamespace}/backupstoragelocations/${w.copies}`, {
      spec: { backupSync: { schedule: '* * * * *' } },
    });
    const restored = await w.b.withFirstSiteGone(async () => {
      const synced = await until(`DataUpload ${name} synced on site B`, 4 * 60_000, async () => {
        const du = await w.b.kube.get(`${uploads(w.ns)}/${name}`).catch(() => undefined);
        return du?.status?.phase === 'Completed' ? du : undefined;
      });
      assert.equal(synced.status.snapshotID, latest.status.copies[0].snapshotID);
      assert.equal(synced.metadata.annotations['ferry.dev/synced-from'], w.copies);
      const listed = await ferryOK(['location', 'backups', w.copies, '--namespace', w.ns], {
        env: { KUBECONFIG: w.b.kubeconfig },
      });
      assert.match(listed.stdout, new RegExp(name));
      await w.b.kube.create(
        downloads(w.ns),
        dataDownload('from-copy', w.copies, {
          source: { dataUpload: { name } },
          targetPVC: { name: 'restored', size: '64Mi' },
        }),
      );
      const { final } = await watchUntil(w.b, `${downloads(w.ns)}/from-copy`, ['Completed', 'Failed'], 10 * 60_000);
      assert.equal(final.status.phase, 'Completed', JSON.stringify(final.status));
      const pvc = await w.b.kube.get(`${claims(w.ns)}/restored`);
      return volumeFile(
        await w.b.kube.get(`/api/v1/persistentvolumes/${pvc.spec.volumeName}`),
        secondSitePaths().storage,
      );
    });
    for (const [file, data] of Object.entries(files))
      assert.deepEqual(await readFile(join(restored, file)), Buffer.from(data));
    assert.equal(await readFile(join(restored, 'changed.txt'), 'utf8'), 'only this is new\n');
    assert.match(await w.resticCheckInB(w.copies, true), /no errors were found/);
  });

  it('resumes a copy killed halfway without re-sending what arrived; refuses a copy the location does not allow', async () => {
    const big = 'big';
    await writeFile(join(source, 'big.bin'), randomBytes(96 << 20));
    await w.a.kube.create(uploads(w.ns), {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'DataUpload',
      metadata: { name: big },
      spec: { sourcePVC: 'data', backupStorageLocation: w.primary },
    });
    await watchUntil(w.a, `${uploads(w.ns)}/${big}`, ['Completed'], 10 * 60_000);
    const fresh = `resume-${w.id}`;
    await w.addCopyLocation(fresh, [w.a]);
    const before = await w.receivedByB();
    await ferryOK(['copy', big, '--to', fresh, '-n', w.ns], { env: { KUBECONFIG: w.a.kubeconfig } });
    const made = ((await w.a.kube.get(copiesPath(w.ns))).items as Obj[]).find(
      (c) => c.spec.dataUpload === big && c.spec.backupStorageLocation === fresh,
    );
    assert.ok(made, '`ferry copy` made a DataCopy');
    // stopped once some packs arrived, then killed
    const pid = await until('the copy to have sent a quarter of the data', 5 * 60_000, async () => {
      const [p] = await stepPids('copy', `${w.ns}/${made.metadata.name}`);
      return p !== undefined && (await w.receivedByB()) - before > 24 << 20 ? p : undefined;
    });
    process.kill(pid, 'SIGSTOP');
    const atKill = (await w.receivedByB()) - before;
    process.kill(pid, 'SIGKILL');
    const copy = await endedCopyOf(big, fresh, 10 * 60_000);
    assert.equal(copy.status.phase, 'Completed', JSON.stringify(copy.status));
    assert.ok(copy.status.attempts >= 2, `attempts: ${copy.status.attempts}`);
    const total = (await w.receivedByB()) - before;
    assert.ok(atKill < 90 << 20, `the kill came after ${atKill} bytes`);
    assert.ok(total < (96 << 20) * 1.15, `both attempts sent ${total} bytes for 96 MiB`);

    const closed = `closed-${w.id}`;
    await w.addCopyLocation(closed, [w.a], { allowedNamespaces: ['someone-else'] });
    const refused = await w.a.kube
      .create(copiesPath(w.ns), {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'DataCopy',
        metadata: { name: 'not-allowed' },
        spec: { dataUpload: big, backupStorageLocation: closed },
      })
      .then(
        () => undefined,
        (err: Error) => err.message,
      );
    assert.match(refused ?? 'admitted', new RegExp(`spec\\.backupStorageLocation: .*${closed}.*allow`));
  });
  it('expires a backup on site A; its copy goes with it or stays, as each policy says', async () => {
    const kept = `kept-${w.id}`;
    await w.addCopyLocation(kept, [w.a]);
    // two policies for the same backups: copies that follow their backup, and copies kept an hour
    for (const [name, destinationLocation, expire] of [
      [`follow-${w.id}`, w.copies, undefined],
      [`keep-${w.id}`, kept, '1h'],
    ])
      await w.a.kube.create(policies, {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'CopyPolicy',
        metadata: { name },
        spec: { sourceLocation: w.primary, destinationLocation, selector: { matchLabels: { tier: 'keep' } }, expire },
      });
    const name = 'short-lived';
    await w.a.kube.create(uploads(w.ns), {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'DataUpload',
      metadata: { name, labels: { tier: 'keep' } },
      spec: { sourcePVC: 'data', backupStorageLocation: w.primary, expire: '4m' },
    });
    const copies = await until('both copies of the short-lived backup', 6 * 60_000, async () => {
      const list = ((await w.a.kube.get(copiesPath(w.ns))).items as Obj[]).filter((c) => c.spec.dataUpload === name);
      return list.length === 2 && list.every((c) => c.status?.phase === 'Completed') ? list : undefined;
    });
    const byLocation = Object.fromEntries(copies.map((c) => [c.spec.backupStorageLocation, c]));
    assert.equal(byLocation[kept].spec.expire, '1h');
    await until(`DataUpload ${name} to expire`, 8 * 60_000, async () =>
      (await w.a.kube.get(`${uploads(w.ns)}/${name}`).catch(() => undefined)) ? undefined : true,
    );
    // the policy without expire: its copy went with the backup, and its snapshot left site B's repository
    await until("the same-as-source copy's snapshot to leave site B", 3 * 60_000, async () =>
      (await w.snapshotsInB(w.copies)).some((e) => e.id === byLocation[w.copies].status.snapshotID) ? undefined : true,
    );
    const left = ((await w.a.kube.get(copiesPath(w.ns))).items as Obj[]).filter((c) => c.spec.dataUpload === name);
    assert.deepEqual(
      left.map((c) => c.spec.backupStorageLocation),
      [kept],
    );
    assert.ok((await w.snapshotsInB(kept)).some((e) => e.id === byLocation[kept].status.snapshotID));
  });
});
