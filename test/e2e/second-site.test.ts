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
import { cronJobName, syncCronJobName } from '../../src/steps/maintenance/cronjobs.ts';
import { scheduleLabels } from '../../src/shared/schedule/names.ts';
import {
  api,
  boundClaim,
  jobFailed,
  runCronJob,
  claims,
  dataDownload,
  downloads,
  stepPids,
  uploads,
  watchUntil,
  type Obj,
} from './world.ts';

let w: TwoSites;
const copiesPath = (ns: string): string => `${api}/namespaces/${ns}/datacopies`;
const policies = `${api}/namespaces/${ferryNamespace}/copypolicies`;
const schedules = (ns: string): string => `${api}/namespaces/${ns}/backupschedules`;
const scheduleLabel = scheduleLabels.schedule;
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
  const list = (await w.a.kube.get(`${uploads(w.ns)}?labelSelector=${scheduleLabel}=${schedule}`)).items as Obj[];
  return list
    .filter((d) => d.status?.phase === 'Completed')
    .sort((x, y) => Date.parse(x.status.completionTimestamp) - Date.parse(y.status.completionTimestamp));
}

const files = { 'a.txt': 'first site\n', 'nested/b.bin': randomBytes(6 << 20) };
let source = '';

describe('second site', () => {
  it('copies each scheduled backup within a minute, the second copy sending only what changed', async (t) => {
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
    const policy = await until('the policy to count its copies', 2 * 60_000, async () => {
      const p = await w.a.kube.get(`${policies}/to-b-${w.id}`);
      return (p.status?.copiesCompleted ?? 0) >= 2 ? p : undefined;
    });
    assert.equal(policy.status.conditions.find((c: Obj) => c.type === 'Ready')?.status, 'True');
    const first = received[1] - received[0];
    const second = received[2] - received[1];
    t.diagnostic(`site B's MinIO received ${first} bytes for the first copy, ${second} for the second`);
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
    // the sync is the location's: its CronJob runs as the sync's own account and goes with spec.backupSync
    const cronJob = `/apis/batch/v1/namespaces/${ferryNamespace}/cronjobs/${syncCronJobName(w.copies)}`;
    const cron = await w.b.kube.get(cronJob);
    assert.equal(cron.spec.jobTemplate.spec.template.spec.serviceAccountName, 'ferry-step-sync');
    await w.b.kube.patch(`${api}/namespaces/${ferryNamespace}/backupstoragelocations/${w.copies}`, {
      spec: { backupSync: null },
    });
    await until('the sync CronJob to go with spec.backupSync', 6 * 60_000, async () =>
      (await w.b.kube.find(cronJob)) ? undefined : true,
    );
  });

  it('resumes a copy killed halfway without re-sending what arrived; refuses a copy the location does not allow', async (t) => {
    const big = 'big';
    await writeFile(join(source, 'big.bin'), randomBytes(96 << 20));
    await w.a.kube.create(uploads(w.ns), {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'DataUpload',
      metadata: { name: big },
      spec: { sourcePVC: 'data', backupStorageLocation: w.primary },
    });
    const backedUp = (await watchUntil(w.a, `${uploads(w.ns)}/${big}`, ['Completed'], 10 * 60_000)).final;
    const size: number = backedUp.status.stats.bytes;
    const fresh = `resume-${w.id}`;
    const freshSpec = await w.addCopyLocation(fresh, [w.a]);
    const packsPrefix = `${freshSpec.s3.prefix}/${w.ns}/data/`;
    const before = await w.receivedByB();
    // the copy moves ~100 MiB in seconds: it waits for a lock on its source until it is found and stopped, then it
    // is let go in slices of 50 ms until two packs arrived, and killed
    const release = await w.holdPrimaryLock();
    await ferryOK(['copy', big, '--to', fresh, '-n', w.ns], { env: { KUBECONFIG: w.a.kubeconfig } });
    const made = ((await w.a.kube.get(copiesPath(w.ns))).items as Obj[]).find(
      (c) => c.spec.dataUpload === big && c.spec.backupStorageLocation === fresh,
    );
    assert.ok(made, '`ferry copy` made a DataCopy');
    const pid = await until('the copy step to start', 3 * 60_000, async () => {
      const [p] = await stepPids('copy', `${w.ns}/${made.metadata.name}`);
      return p;
    });
    process.kill(pid, 'SIGSTOP');
    await release();
    for (let slice = 0; (await w.objectsInB(w.b.s3.bucket, packsPrefix)).length < 2; slice++) {
      assert.ok(slice < 1200, 'two packs arrived within a minute of running');
      process.kill(pid, 'SIGCONT');
      await new Promise((r) => setTimeout(r, 50));
      process.kill(pid, 'SIGSTOP');
    }
    const arrivedPacks = await w.objectsInB(w.b.s3.bucket, packsPrefix);
    const arrived = arrivedPacks.length;
    const arrivedBytes = arrivedPacks.reduce((n, o) => n + o.size, 0);
    process.kill(pid, 'SIGKILL');
    const copy = await endedCopyOf(big, fresh, 10 * 60_000);
    assert.equal(copy.status.phase, 'Completed', JSON.stringify(copy.status));
    assert.ok(copy.status.attempts >= 2, `attempts: ${copy.status.attempts}`);
    const total = (await w.receivedByB()) - before;
    t.diagnostic(`copy of ${size} bytes killed after ${arrived} packs; the attempts sent ${total} bytes in all`);
    // the packs that had arrived are not sent again (a pack still in flight at the kill is, and MinIO counts the
    // part it received: the bound on the total allows two)
    assert.ok(
      copy.status.stats.bytesSent <= size - arrivedBytes + (1 << 20),
      `the last attempt sent ${copy.status.stats.bytesSent} bytes of ${size}, ${arrivedBytes} having arrived`,
    );
    assert.ok(total < size + 2 * (16 << 20) + (1 << 20), `both attempts sent ${total} bytes for a ${size}-byte backup`);

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
  // both wait on the clock (an expiry, a retention): they run side by side
  describe('expiry and Object Lock', { concurrency: 2 }, () => {
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
        spec: { sourcePVC: 'data', backupStorageLocation: w.primary, expire: '2m' },
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
      // (a listing that meets the snapshot file as it is removed fails: the next look settles it)
      await until("the same-as-source copy's snapshot to leave site B", 3 * 60_000, async () =>
        (await w.snapshotsInB(w.copies).catch(() => undefined))?.every(
          (e) => e.id !== byLocation[w.copies].status.snapshotID,
        ),
      );
      const left = await until('the same-as-source DataCopy to go', 60_000, async () => {
        const list = ((await w.a.kube.get(copiesPath(w.ns))).items as Obj[]).filter((c) => c.spec.dataUpload === name);
        return list.length === 1 ? list : undefined;
      });
      assert.deepEqual(
        left.map((c) => c.spec.backupStorageLocation),
        [kept],
      );
      assert.ok((await w.snapshotsInB(kept)).some((e) => e.id === byLocation[kept].status.snapshotID));
    });
    it("keeps the latest copy on an Object Lock location restorable after every object was deleted or overwritten with the location's own keys; prune frees a copy once its retention ended", async () => {
      const latest = (await completedUploads('every-minute')).at(-1)!;
      const locked = `locked-${w.id}`;
      const lockedS3 = w.lockedS3(locked);
      await w.addCopyLocation(locked, [w.a], { s3: lockedS3, objectLock: { mode: 'GOVERNANCE', retention: '15m' } });
      await ferryOK(['copy', latest.metadata.name, '--to', locked, '-n', w.ns], {
        env: { KUBECONFIG: w.a.kubeconfig },
      });
      const copy = await endedCopyOf(latest.metadata.name, locked);
      assert.equal(copy.status.phase, 'Completed', JSON.stringify(copy.status));

      // the attacker holds site B's keys: every pack overwritten, then every object deleted
      const attack = await w.attackLocked(lockedS3.prefix);
      assert.ok(attack.overwritten > 0 && attack.deleted > attack.overwritten, JSON.stringify(attack));
      assert.match(attack.versionDelete, /AccessDenied|WORM|retention|locked/i);
      assert.equal((await w.objectsInB(w.b.s3.lockedBucket, lockedS3.prefix)).length, 0, 'nothing current is left');

      // site B reads what the object versions hold
      const reader = `locked-read-${w.id}`;
      await w.addCopyLocation(reader, [w.b], { s3: lockedS3, recoverVersions: true });
      await w.b.kube.create(
        downloads(w.ns),
        dataDownload('from-locked', reader, {
          source: { snapshotID: copy.status.snapshotID },
          targetPVC: { name: 'from-locked', size: '64Mi' },
        }),
      );
      const { final } = await watchUntil(w.b, `${downloads(w.ns)}/from-locked`, ['Completed', 'Failed'], 10 * 60_000);
      assert.equal(final.status.phase, 'Completed', JSON.stringify(final.status));
      const pvc = await w.b.kube.get(`${claims(w.ns)}/from-locked`);
      const restored = volumeFile(
        await w.b.kube.get(`/api/v1/persistentvolumes/${pvc.spec.volumeName}`),
        secondSitePaths().storage,
      );
      for (const [file, data] of Object.entries(files))
        assert.deepEqual(await readFile(join(restored, file)), Buffer.from(data));

      // a copy on a location with a short retention: deleting it waits for the retention, then prune frees every version
      const short = `locked-short-${w.id}`;
      const shortS3 = w.lockedS3(short);
      await w.addCopyLocation(short, [w.a], { s3: shortS3, objectLock: { mode: 'GOVERNANCE', retention: '60s' } });
      await ferryOK(['copy', latest.metadata.name, '--to', short, '-n', w.ns], { env: { KUBECONFIG: w.a.kubeconfig } });
      const shortCopy = await endedCopyOf(latest.metadata.name, short);
      assert.equal(shortCopy.status.phase, 'Completed', JSON.stringify(shortCopy.status));
      const packs = async (): Promise<number> => (await w.lockedVersions(`${shortS3.prefix}/${w.ns}/data/`)).length;
      assert.ok((await packs()) > 0);
      await w.a.kube.delete(`${copiesPath(w.ns)}/${shortCopy.metadata.name}`);
      await until(`DataCopy ${shortCopy.metadata.name} to go once its retention ended`, 5 * 60_000, async () =>
        (await w.a.kube.find(`${copiesPath(w.ns)}/${shortCopy.metadata.name}`)) ? undefined : true,
      );
      const prune = await runCronJob(w.a.kube, cronJobName(short, 'prune'), `prune-${w.id}`);
      assert.ok(!jobFailed(prune), `the prune Job failed: ${JSON.stringify(prune.status)}`);
      assert.equal(await packs(), 0, 'prune removed every version of the packs');
    });
  });
});
