// Issue 33, the restore side of a second site, on the box's cluster (needs the box: the lead runs it): a location
// with spec.backupSync gets its sync CronJob; a backup written into its repository by "the other cluster" (ferry's
// engine with ferry's tags, as site A's transfer writes them) appears as a Completed synced DataUpload, a
// DataDownload restores it into a new PVC with identical data, a DataUpload this cluster made under a name the
// repository also holds is left alone, a tenant cannot forge the mark, and removing spec.backupSync removes the
// CronJob.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BackupStorageLocation } from '../../src/shared/api/types.ts';
import { backup } from '../../src/engine/operations/backup.ts';
import { syncCronJobName } from '../../src/steps/maintenance/cronjobs.ts';
import { compareTrees } from '../support/compare-tree.ts';
import {
  api,
  claims,
  completedBackup,
  dataDownload,
  downloads,
  ferryNamespace,
  uploads,
  volumePath,
  watchUntil,
  world,
} from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let source: string;
const cronJobs = `/apis/batch/v1/namespaces/${ferryNamespace}/cronjobs`;
const jobs = `/apis/batch/v1/namespaces/${ferryNamespace}/jobs`;
let locationPath: string;

before(
  async () => {
    w = await world('sync', ({ app }) => ({ allowedNamespaces: [app], backupSync: {} }));
    locationPath = `${api}/namespaces/${ferryNamespace}/backupstoragelocations/${w.location}`;
    source = await mkdtemp(join(tmpdir(), 'ferry-e2e-sync-'));
    await writeFile(join(source, 'site-a.bin'), randomBytes(3 * 1024 * 1024));
  },
  { timeout: 30 * 60_000 },
);

after(async () => {
  await w?.cluster.kube.delete(locationPath);
  await w?.cluster.cleanup();
  if (source) await rm(source, { recursive: true, force: true });
});

/** Runs a Job from the sync CronJob (what `kubectl create job --from=cronjob/...` does) and waits for its end. */
async function syncNow(n: number): Promise<Obj> {
  const cron = await w.cluster.kube.get(`${cronJobs}/${syncCronJobName(w.location)}`);
  const name = `${syncCronJobName(w.location).slice(0, 44)}-m${n}`;
  await w.cluster.kube.create(jobs, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' } },
    spec: cron.spec.jobTemplate.spec,
  });
  return w.cluster.kube.waitFor(
    `${jobs}/${name}`,
    `sync Job ${name} to finish`,
    (j) =>
      (j.status?.conditions ?? []).some((c: Obj) => ['Complete', 'Failed'].includes(c.type) && c.status === 'True')
        ? j
        : undefined,
    10 * 60_000,
  );
}

describe('backup sync of a location', { timeout: 60 * 60_000 }, () => {
  it('makes the sync CronJob, as its own account', async () => {
    const cron = await w.cluster.kube.waitFor(
      `${cronJobs}/${syncCronJobName(w.location)}`,
      'the sync CronJob',
      (c) => c,
      3 * 60_000,
    );
    const pod = cron.spec.jobTemplate.spec.template.spec;
    assert.equal(pod.serviceAccountName, 'ferry-step-sync');
    assert.deepEqual(pod.containers[0].args, ['location-sync', w.location]);
    assert.equal(cron.spec.schedule, '* * * * *');
  });

  it("a backup the other site wrote appears as a synced DataUpload and restores; this cluster's own is left alone", async () => {
    // this cluster's own backup, whose name the repository holds too
    await completedBackup(w, w.app, 'mine');
    const repo = await w.repository(w.app);
    let snapshotID: string;
    try {
      const tags = [`ferry.dev/namespace=${w.app}`, 'ferry.dev/pvc=data', 'ferry.dev/uid=site-a-uid'];
      snapshotID = (await backup(repo, { paths: [source], tags: [...tags, 'ferry.dev/dataupload=from-site-a'] }))
        .snapshotID;
    } finally {
      await repo.close();
    }
    const job = await syncNow(1);
    assert.ok(
      (job.status?.conditions ?? []).some((c: Obj) => c.type === 'Complete'),
      `the sync Job failed: ${JSON.stringify(job.status)}`,
    );
    const synced = await w.cluster.kube.get(`${uploads(w.app)}/from-site-a`);
    assert.equal(synced.metadata.annotations['ferry.dev/synced-from'], w.location);
    assert.equal(synced.status.phase, 'Completed');
    assert.equal(synced.status.snapshotID, snapshotID);
    const mine = await w.cluster.kube.get(`${uploads(w.app)}/mine`);
    assert.equal(mine.metadata.annotations?.['ferry.dev/synced-from'], undefined, 'the own backup is not taken over');
    const bsl = (await w.cluster.kube.get(locationPath)) as unknown as BackupStorageLocation;
    assert.equal(bsl.status?.sync?.created, 1, bsl.status?.sync?.message);
    const jobsOf = await w.cluster.kube.get(`${jobs}?labelSelector=ferry.dev/uid=${synced.metadata.uid}`);
    assert.deepEqual(jobsOf.items, [], 'no step Job for a synced DataUpload');

    await w.cluster.kube.create(
      downloads(w.app),
      dataDownload('from-site-a', w.location, {
        targetPVC: { name: 'restored-from-a' },
        source: { dataUpload: { name: 'from-site-a' } },
      }),
    );
    const { final } = await watchUntil(
      w.cluster,
      `${downloads(w.app)}/from-site-a`,
      ['Completed', 'Failed', 'Canceled'],
      15 * 60_000,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    const pvc = await w.cluster.kube.get(`${claims(w.app)}/restored-from-a`);
    assert.deepEqual(await compareTrees(source, await volumePath(w.cluster, pvc.spec.volumeName)), []);
  });

  it("refuses a tenant's forged synced DataUpload", async () => {
    await assert.rejects(
      w.cluster.kube.create(uploads(w.app), {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'DataUpload',
        metadata: { name: 'forged', annotations: { 'ferry.dev/synced-from': w.location } },
        spec: { sourcePVC: 'data', backupStorageLocation: w.location },
      }),
      /ferry\.dev\/synced-from marks a DataUpload made by a location's backup sync/,
    );
  });

  it('removing spec.backupSync removes the CronJob', async () => {
    await w.cluster.kube.patch(locationPath, { spec: { backupSync: null } }, 'merge');
    // the reconcile the spec change starts gives it to garbage collection, which deletes it
    const deadline = Date.now() + 6 * 60_000;
    while (await w.cluster.kube.find(`${cronJobs}/${syncCronJobName(w.location)}`)) {
      assert.ok(Date.now() < deadline, 'the sync CronJob is still there 6 minutes after spec.backupSync went');
      await new Promise((r) => setTimeout(r, 1000));
    }
  });
});
