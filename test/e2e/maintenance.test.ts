// Issue 5, repository maintenance: the reconcile Job makes a location's maintenance CronJobs; runs made from them
// (as an operator would, `kubectl create job --from=cronjob/...`) skip a repository a backup is writing (prune and
// check alike, both under the exclusive lock) without disturbing the backup, skip one a restore is reading (issue 28)
// and the restore gets the right bytes, free what a forgotten snapshot used and record the bytes in the location's
// history, and clear the lock of a maintenance Job killed with SIGKILL so the next run succeeds; restic checks after.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes as cryptoBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackupStorageLocation, MaintenanceRun, MaintenanceTask } from '../../src/shared/api/types.ts';
import { decodeLock, type LockInfo } from '../../src/engine/lock/lock.ts';
import { lockStore } from '../../src/engine/repository/lock-store.ts';
import { forgetSnapshots } from '../../src/engine/repository/snapshots.ts';
import { locationReconcileJobName } from '../../src/dispatcher/location.ts';
import { openBackend } from '../../src/engine/backend/open.ts';
import { repositoryLocation, repositoryPassword } from '../../src/shared/location/repository.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { cronJobName } from '../../src/steps/maintenance/cronjobs.ts';
import { KubeError } from '../support/cluster.ts';
import { compareTrees } from '../support/compare-tree.ts';
import {
  api,
  boundClaim,
  claims,
  completedBackup,
  dataDownload,
  dataUpload,
  downloads,
  ferryNamespace,
  packBytes,
  pauseTransfer,
  stepPids,
  uploads,
  volumePath,
  jobEnded,
  jobFinished,
  runCronJob,
  watchUntil,
  world,
} from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let volume: string;
const mib = 1024 * 1024;
const jobs = `/apis/batch/v1/namespaces/${ferryNamespace}/jobs`;
const cronJobs = `/apis/batch/v1/namespaces/${ferryNamespace}/cronjobs`;
let locationPath: string;
let made = 0;
/** Job names differ between runs of the suite: the reconcile CronJob is shared by every location */
const runId = cryptoBytes(2).toString('hex');

async function writeRandom(path: string, size: number): Promise<void> {
  await writeFile(path, cryptoBytes(size));
}

before(
  async () => {
    w = await world('maint', ({ app }) => ({
      allowedNamespaces: [app],
      maintenance: { check: { readDataSubset: '100%' } },
    }));
    locationPath = `${api}/namespaces/${ferryNamespace}/backupstoragelocations/${w.location}`;
    ({ path: volume } = await boundClaim(w.cluster, w.app, 'data', '512Mi'));
    await writeRandom(join(volume, 'shared.bin'), 8 * mib);
  },
  { timeout: 30 * 60_000 },
);

after(async () => {
  // the location owns its maintenance CronJobs: deleting it removes them
  await w?.cluster.kube.delete(locationPath);
  await w?.cluster.cleanup();
});

/** Runs a Job made from a CronJob's jobTemplate (what `kubectl create job --from=cronjob/...` does); waits for its end. */
function runFrom(cronJob: string, env: Record<string, string> = {}): Promise<Obj> {
  return runCronJob(w.cluster.kube, cronJob, `${cronJob.slice(0, 44)}-${runId}e${++made}`, env);
}

const finished = (name: string): Promise<Obj> => jobFinished(w.cluster.kube, name);

const succeeded = (job: Obj): boolean =>
  (job.status?.conditions ?? []).some((c: Obj) => c.type === 'Complete' && c.status === 'True');

/** Runs a maintenance Job of `task` and reads the run it recorded (found by its Job: several may run at once). */
async function maintain(
  task: MaintenanceTask,
  env: Record<string, string> = {},
): Promise<{ job: Obj; run: MaintenanceRun }> {
  const job = await runFrom(cronJobName(w.location, task), env);
  const bsl = (await w.cluster.kube.get(locationPath)) as unknown as BackupStorageLocation;
  const runs = bsl.status?.maintenance?.repositories?.find((r) => r.namespace === w.app)?.runs ?? [];
  const run = runs.find((r) => r.job === job.metadata.name);
  assert.ok(run, `Job ${job.metadata.name} recorded no run: ${JSON.stringify(bsl.status?.maintenance)}`);
  assert.equal(run.task, task);
  return { job, run };
}

const backup = (name: string): Promise<Obj> => completedBackup(w, w.app, name);

async function locks(repo: Repository): Promise<(LockInfo & { id: string })[]> {
  const store = lockStore(repo);
  const found: (LockInfo & { id: string })[] = [];
  for await (const id of store.list()) {
    try {
      found.push({ ...decodeLock(await store.load(id)), id });
    } catch (err) {
      if (!store.isNotExist(err)) throw err;
    }
  }
  return found;
}

describe('repository maintenance', { timeout: 60 * 60_000 }, () => {
  it('creating a location makes its three maintenance CronJobs within a minute (the dispatcher starts the reconcile); a spec change reaches them', async (t) => {
    let bsl = await w.cluster.kube.get(locationPath);
    const created = Date.parse(bsl.metadata.creationTimestamp);
    const crons = await Promise.all(
      (['prune', 'check', 'check-data'] as const).map((task) =>
        w.cluster.kube.waitFor(
          `${cronJobs}/${cronJobName(w.location, task)}`,
          `the ${task} CronJob`,
          (c) => c,
          3 * 60_000,
        ),
      ),
    );
    const seconds = (Date.now() - created) / 1000;
    t.diagnostic(`maintenance CronJobs there ${seconds.toFixed(1)} s after the location was created`);
    // seconds resolution of creationTimestamp, a slow shared box: "within a minute" with room, far below the 5-minute period
    assert.ok(seconds < 90, `the CronJobs took ${seconds} s`);
    // made by the Job the dispatcher started at admission, not by the periodic reconcile
    const first = await w.cluster.kube.get(
      `${jobs}/${locationReconcileJobName(bsl.metadata.uid, bsl.metadata.generation)}`,
    );
    assert.ok(
      succeeded(await finished(first.metadata.name)),
      `the location's reconcile Job failed: ${JSON.stringify(first.status)}`,
    );
    for (const [i, task] of (['prune', 'check', 'check-data'] as const).entries()) {
      assert.deepEqual(crons[i].spec.jobTemplate.spec.template.spec.containers[0].args, [
        'maintenance',
        w.location,
        task,
      ]);
      assert.equal(crons[i].metadata.ownerReferences?.[0]?.uid, bsl.metadata.uid);
    }

    const changedAt = Date.now();
    bsl = await w.cluster.kube.patch(
      locationPath,
      { spec: { maintenance: { ...bsl.spec.maintenance, prune: { schedule: '17 2 * * *' } } } },
      'merge',
    );
    await w.cluster.kube.waitFor(
      `${cronJobs}/${cronJobName(w.location, 'prune')}`,
      'the new prune schedule',
      (c) => (c.spec.schedule === '17 2 * * *' ? c : undefined),
      3 * 60_000,
    );
    t.diagnostic(
      `the prune CronJob had the new schedule ${((Date.now() - changedAt) / 1000).toFixed(1)} s after the change`,
    );
    await w.cluster.kube.get(`${jobs}/${locationReconcileJobName(bsl.metadata.uid, bsl.metadata.generation)}`);

    // the periodic reconcile (the safety net) still runs cleanly beside it
    const job = await runFrom('ferry-maintenance-reconcile');
    assert.ok(succeeded(job), `reconcile failed: ${JSON.stringify(job.status)}`);
  });

  it('the reconcile account may write only ferry-maint-* CronJobs running as ferry-step-maintenance', async () => {
    const { status } = await w.cluster.kube.create(
      `/api/v1/namespaces/${ferryNamespace}/serviceaccounts/ferry-maintenance-reconcile/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
    );
    const asReconcile = w.cluster.kube.withToken(status.token);
    const template = (await w.cluster.kube.get(`${cronJobs}/${cronJobName(w.location, 'check')}`)).spec.jobTemplate;
    const cronJob = (name: string, serviceAccountName = 'ferry-step-maintenance', command?: string): Obj => {
      const jobTemplate = structuredClone(template);
      jobTemplate.spec.template.spec.serviceAccountName = serviceAccountName;
      if (command) for (const c of jobTemplate.spec.template.spec.containers) c.args = [command, ...c.args.slice(1)];
      return {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: { name },
        spec: { schedule: '0 0 1 1 *', suspend: true, jobTemplate },
      };
    };
    const refusal = async (obj: Obj): Promise<string> => {
      const err = await asReconcile.create(cronJobs, obj).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (err === undefined) await w.cluster.kube.delete(`${cronJobs}/${obj.metadata.name}`);
      return err instanceof KubeError ? err.message : `allowed (${String(err ?? 'created')})`;
    };
    // a policy just installed takes a moment to be enforced
    const name = `ferry-other-${runId}`;
    let message = '';
    for (const deadline = Date.now() + 60_000; Date.now() < deadline && !/may only create or update/.test(message);) {
      message = await refusal(cronJob(name));
      if (!/may only create or update/.test(message)) await new Promise((r) => setTimeout(r, 1000));
    }
    assert.match(
      message,
      new RegExp(
        `the maintenance reconcile account may only create or update CronJobs named ferry-maint-\\* or ferry-sync-\\*, not ${name}`,
      ),
    );
    assert.match(
      await refusal(cronJob(`ferry-maint-probe-${runId}`, 'ferry-dispatcher')),
      /must run its pods as ferry-step-maintenance, not ferry-dispatcher/,
    );
    // a location's backup sync runs as its own account, and only that one (the probe runs the sync, so that the
    // account is all that is wrong: two policies refusing one request name either reason, in no fixed order)
    assert.match(
      await refusal(cronJob(`ferry-sync-probe-${runId}`, 'ferry-step-maintenance', 'location-sync')),
      /must run its pods as ferry-step-sync, not ferry-step-maintenance/,
    );
    // within the policy: created (and deleted again by the admin)
    assert.equal(await refusal(cronJob(`ferry-maint-probe-${runId}`)), 'allowed (created)');
    // updating another CronJob is refused too, with the same message
    const periodic = await w.cluster.kube.get(`${cronJobs}/ferry-maintenance-reconcile`);
    const err = await asReconcile.request('PUT', `${cronJobs}/ferry-maintenance-reconcile`, periodic).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(
      err instanceof KubeError &&
        /may only create or update CronJobs named ferry-maint-\* or ferry-sync-\*, not ferry-maintenance-reconcile/.test(
          err.message,
        ),
      String(err),
    );
  });

  it('skips pruning and checking a repository a backup is writing, and the backup completes', async (t) => {
    await backup('first');
    await writeRandom(join(volume, 'big.bin'), 192 * mib);
    await w.cluster.kube.create(uploads(w.app), dataUpload('during', w.location));
    // held while maintenance runs, however fast the machine is
    const resume = await pauseTransfer(w, 'DataUpload', w.app, 'during', w.app);
    try {
      const started = Date.now();
      const [prune, check] = await Promise.all([
        maintain('prune', { FERRY_LOCK_WAIT_MS: '0' }),
        maintain('check', { FERRY_LOCK_WAIT_MS: '0' }),
      ]);
      t.diagnostic(
        `prune: ${prune.run.outcome} (${prune.run.message}); check: ${check.run.outcome} (${check.run.message}); both done in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      const during = await w.cluster.kube.get(`${uploads(w.app)}/during`);
      assert.notEqual(
        during.status?.phase,
        'Completed',
        'the backup was still running when maintenance ended, so the test proves something',
      );
      assert.equal(prune.run.outcome, 'Skipped');
      assert.match(prune.run.message ?? '', /backup or restore is in progress/);
      assert.ok(succeeded(prune.job), 'a skip is not a failed Job');
      // check takes the exclusive lock too: no verdict on a repository being written
      assert.equal(check.run.outcome, 'Skipped', check.run.message);
      assert.match(check.run.message ?? '', /backup or restore is in progress/);
      assert.ok(succeeded(check.job), 'a skip is not a failed Job');
    } finally {
      resume();
    }
    await watchUntil(w.cluster, `${uploads(w.app)}/during`, ['Completed', 'Failed', 'Canceled'], 15 * 60_000).then(
      ({ final }) => {
        assert.equal(final.status.phase, 'Completed', final.status.message);
      },
    );
  });

  it('skips pruning a repository a restore is reading, and the restore completes with the right bytes', async (t) => {
    // the backup of the test before: 200 MiB, a restore long enough to be caught reading
    const { final: during } = await watchUntil(
      w.cluster,
      `${uploads(w.app)}/during`,
      ['Completed', 'Failed', 'Canceled'],
      15 * 60_000,
    );
    assert.equal(during.status.phase, 'Completed', during.status.message);
    await w.cluster.kube.create(
      downloads(w.app),
      dataDownload('reading', w.location, {
        targetPVC: { name: 'restored-reading' },
        source: { dataUpload: { name: 'during', namespace: w.app } },
      }),
    );
    const resume = await pauseTransfer(w, 'DataDownload', w.app, 'reading', w.app);
    let prune;
    try {
      prune = await maintain('prune', { FERRY_LOCK_WAIT_MS: '0' });
    } finally {
      resume();
    }
    t.diagnostic(`prune beside the restore: ${prune.run.outcome} (${prune.run.message})`);
    assert.equal(prune.run.outcome, 'Skipped');
    assert.match(prune.run.message ?? '', /backup or restore is in progress/);
    const { final } = await watchUntil(
      w.cluster,
      `${downloads(w.app)}/reading`,
      ['Completed', 'Failed', 'Canceled'],
      15 * 60_000,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    const pvc = await w.cluster.kube.get(`${claims(w.app)}/restored-reading`);
    assert.deepEqual(await compareTrees(volume, await volumePath(w.cluster, pvc.spec.volumeName)), []);
  });

  it('prune frees what a forgotten snapshot used, and the history shows the bytes freed', async (t) => {
    await writeRandom(join(volume, 'unique.bin'), 6 * mib);
    const doomed = await backup('doomed');
    const repo = await w.repository(w.app);
    try {
      // forgotten without pruning, as `restic forget` does: the data stays until a prune
      await forgetSnapshots(repo, [doomed.status.snapshotID]);
      const before = await packBytes(repo);
      const { job, run } = await maintain('prune', { FERRY_LOCK_WAIT_MS: '0' });
      const freed = before - (await packBytes(repo));
      t.diagnostic(`prune: ${run.message} in ${run.durationSeconds} s; packs shrank by ${freed} bytes`);
      assert.ok(succeeded(job));
      assert.equal(run.outcome, 'Succeeded', run.message);
      assert.equal(run.bytesFreed, freed);
      // the unique file was 6 MiB of random bytes, and its big neighbour is still used by the "during" snapshot
      assert.ok(freed >= 5.5 * mib && freed <= 7 * mib, `freed ${freed} bytes`);
      const bsl = await w.cluster.kube.get(locationPath);
      assert.equal(bsl.status.maintenance.lastOutcome, 'Succeeded');
      assert.equal(bsl.status.conditions.find((c: Obj) => c.type === 'Maintained')?.status, 'True');
    } finally {
      await repo.close();
    }
    await w.resticCheck(w.app, true);
  });

  it('finds a repository only the bucket knows (no DataUpload, not allowed any more) and checks it', async () => {
    const gone = `${w.app}-gone`;
    const repo = await Repository.init(
      openBackend(repositoryLocation(w.spec, gone), {
        s3: {
          region: w.cluster.s3.region,
          credentials: { accessKeyId: w.cluster.s3.accessKey, secretAccessKey: w.cluster.s3.secretKey },
        },
      }),
      repositoryPassword(`secret of ${w.location}`, gone),
    );
    await repo.close();
    const job = await runFrom(cronJobName(w.location, 'check'), { FERRY_LOCK_WAIT_MS: '0' });
    assert.ok(succeeded(job));
    const bsl = (await w.cluster.kube.get(locationPath)) as unknown as BackupStorageLocation;
    const run = bsl.status?.maintenance?.repositories
      ?.find((r) => r.namespace === gone)
      ?.runs.find((r) => r.job === job.metadata.name);
    assert.ok(run, `Job ${job.metadata.name} recorded no run for ${gone}: ${JSON.stringify(bsl.status?.maintenance)}`);
    assert.deepEqual([run.task, run.outcome, run.errorsFound], ['check', 'Succeeded', 0]);
  });

  it('clears the lock of a maintenance Job killed with SIGKILL, and the next run succeeds', async (t) => {
    const repo = await w.repository(w.app);
    try {
      const killed = await killWhileLocked(repo, t);
      const left = (await locks(repo)).filter((l) => l.hostname.startsWith(killed));
      assert.equal(left.length, 1, 'the killed Job left its lock behind');
      const { job, run } = await maintain('prune', { FERRY_LOCK_WAIT_MS: '0' });
      t.diagnostic(`next prune: ${run.outcome}, ${run.staleLocksRemoved} lock(s) removed: ${run.message}`);
      assert.ok(succeeded(job));
      assert.equal(run.outcome, 'Succeeded', run.message);
      assert.ok((run.staleLocksRemoved ?? 0) >= 1);
      assert.deepEqual(await locks(repo), [], 'no lock is left');
      const check = await maintain('check-data', { FERRY_LOCK_WAIT_MS: '0' });
      assert.equal(check.run.outcome, 'Succeeded', check.run.message);
    } finally {
      await repo.close();
    }
    await w.resticCheck(w.app, true);
  });
});

/**
 * Starts a check-data Job (it reads every pack back, under a lock) and SIGKILLs its process as soon as its lock is in
 * the repository; tries again if a run ends before it can be killed. Returns the killed Job's name.
 */
async function killWhileLocked(repo: Repository, t: { diagnostic(s: string): void }): Promise<string> {
  for (let attempt = 1; attempt <= 3; attempt++) {
    const cron = await w.cluster.kube.get(`${cronJobs}/${cronJobName(w.location, 'check-data')}`);
    const template = structuredClone(cron.spec.jobTemplate);
    const name = `${cronJobName(w.location, 'check-data').slice(0, 44)}-${runId}k${attempt}`;
    await w.cluster.kube.create(jobs, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name, labels: template.metadata?.labels },
      spec: template.spec,
    });
    let killed = false;
    const deadline = Date.now() + 10 * 60_000;
    while (!killed && Date.now() < deadline) {
      const held = (await locks(repo)).some((l) => l.hostname.startsWith(name));
      if (held) {
        const pids = await stepPids('maintenance', w.location, 'check-data');
        for (const pid of pids) process.kill(pid, 'SIGKILL');
        killed = pids.length > 0;
        if (killed)
          t.diagnostic(`attempt ${attempt}: SIGKILLed pid(s) ${pids.join(', ')} of Job ${name} while it held its lock`);
      }
      const job = await w.cluster.kube.get(`${jobs}/${name}`);
      if (!killed && jobEnded(job)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const job = await finished(name);
    if (killed) {
      assert.ok(!succeeded(job), `Job ${name} did not fail after its process was killed`);
      return name;
    }
    t.diagnostic(`attempt ${attempt}: Job ${name} ended before it could be killed`);
  }
  throw new Error('No check-data Job could be killed while it held its lock in 3 attempts.');
}
