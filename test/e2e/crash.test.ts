// Issue 4, end-to-end item 5: crash and resume. Every step of DataUploads and DataDownloads is SIGKILLed at a
// seeded random moment after its Job appears (the step's container process, found from the host by its command
// line); the Job's retry or the sweep runs the step again. Every resource still ends Completed, each
// DataDownload restores the data of the DataUpload it names exactly, nothing is left behind, the only locks left in
// the repository are those of killed step pods (which the steps' stale-lock rule removes), and `restic check
// --read-data` passes. FERRY_CRASH_RUNS (default 20) and FERRY_CRASH_SEED replay or widen a run.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { jobName } from '../../src/shared/step-job/contract.ts';
import type { ResourceKind, StepName } from '../../src/shared/api/types.ts';
import type { KubeObject } from '../../src/shared/kube/kube.ts';
import { removeLocksWhere } from '../../src/engine/lock/lock.ts';
import { lockStore } from '../../src/engine/repository/lock-store.ts';
import { deadStepReason } from '../../src/steps/stale-locks.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { makeFixtureTree } from '../support/fixture-tree.ts';
import { seededInt, seededRandom } from '../support/seeded.ts';
import {
  boundClaim,
  claims,
  dataDownload,
  dataUpload,
  downloads,
  ferryNamespace,
  settledLeftovers,
  summary,
  uploads,
  volumePath,
  watchUntil,
  world,
} from './world.ts';
import type { Obj, World } from './world.ts';

const runs = Number(process.env.FERRY_CRASH_RUNS || 20);
const seed = Number(process.env.FERRY_CRASH_SEED || Math.floor(Math.random() * 2 ** 31));
/** pairs (a DataUpload, then a DataDownload of it) in flight at once: the box's transfer limit is 2 per node */
const concurrency = 5;
const phaseTimeoutMs = 15 * 60_000;
const mib = 1024 * 1024;

const stepsOf: Record<ResourceKind, StepName[]> = {
  DataUpload: ['snapshot', 'expose', 'transfer', 'finalize'],
  DataDownload: ['expose', 'transfer', 'finalize'],
};
/** the longest wait before a kill: a transfer runs longer than the other steps */
const maxDelayMs: Record<StepName, number> = {
  snapshot: 2500,
  expose: 2500,
  transfer: 5000,
  finalize: 2500,
  delete: 2500,
};

interface PlannedKill {
  step: StepName;
  delayMs: number;
}

interface Kill extends PlannedKill {
  /** the process was alive and got SIGKILL; false when the step had finished first */
  hit: boolean;
}

let w: World & { app: string; other: string };

before(
  async () => {
    w = await world('crash', ({ app }) => ({ allowedNamespaces: [app] }));
    const { path } = await boundClaim(w.cluster, w.app, 'first', '16Mi');
    await makeFixtureTree(path, { smallFiles: 10, bigFile: mib, seed: 1 });
    // one backup first makes the repository: many first backups racing to create it is not what this suite is about
    await w.cluster.kube.create(uploads(w.app), dataUpload('first', w.location, { sourcePVC: 'first' }));
    const first = await watchUntil(
      w.cluster,
      `${uploads(w.app)}/first`,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
    );
    assert.equal(first.final.status.phase, 'Completed', first.final.status.message);
  },
  { timeout: 30 * 60_000 },
);

after(async () => {
  // without its location the delete step lets the namespace's DataUploads go at once
  await w?.cluster.kube.delete(
    `/apis/ferry.dev/v1alpha1/namespaces/${ferryNamespace}/backupstoragelocations/${w.location}`,
  );
  await w?.cluster.cleanup();
});

/** pid and argv of every running step process, read from the host's /proc (containers' processes show there too) */
async function scanStepProcesses(): Promise<{ pid: number; argv: string[] }[]> {
  const found: { pid: number; argv: string[] }[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = await readFile(`/proc/${entry}/cmdline`, 'utf8').then(
      (s) => s.split('\0').filter((a) => a !== ''),
      () => [],
    );
    if (argv.some((a) => a.endsWith('src/entry/step.ts'))) found.push({ pid: Number(entry), argv });
  }
  return found;
}

/** One scan of /proc serves every killer looking within the same 200 ms: the machine has 2 cores. */
let lastScan: { at: number; result: Promise<{ pid: number; argv: string[] }[]> } | undefined;
function stepProcesses(): Promise<{ pid: number; argv: string[] }[]> {
  if (!lastScan || Date.now() - lastScan.at > 200) lastScan = { at: Date.now(), result: scanStepProcesses() };
  return lastScan.result;
}

/** The process running `step` for the resource `ref` (Kind/namespace/name), if one runs now. */
async function stepProcess(step: StepName, ref: string): Promise<number | undefined> {
  const p = (await stepProcesses()).find(({ argv }) => argv.at(-2) === step && argv.at(-1) === ref);
  return p?.pid;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for the first Job of `step`, then `delayMs`, then SIGKILLs the step's process if it still runs. */
async function crashStep(
  kind: ResourceKind,
  ns: string,
  name: string,
  uid: string,
  plan: PlannedKill,
  done: () => boolean,
): Promise<Kill> {
  const job = `/apis/batch/v1/namespaces/${ferryNamespace}/jobs/${jobName(kind, uid, plan.step, 1)}`;
  while (!(await w.cluster.kube.find(job))) {
    if (done()) return { ...plan, hit: false };
    await sleep(500);
  }
  await sleep(plan.delayMs);
  const ref = `${kind}/${ns}/${name}`;
  // the pod may still be starting: keep looking until its process runs or its Job has finished
  for (let looks = 0; ;) {
    const pid = await stepProcess(plan.step, ref);
    if (pid !== undefined) {
      try {
        process.kill(pid, 'SIGKILL');
        return { ...plan, hit: true };
      } catch {
        // it exited between the look and the kill
      }
    }
    // the Job is asked only now and then: every look is a request to a busy apiserver
    if (++looks % 5 === 0) {
      const status = (await w.cluster.kube.find(job))?.status;
      if (!status || status.succeeded || status.failed) return { ...plan, hit: false };
    }
    if (done()) return { ...plan, hit: false };
    await sleep(200);
  }
}

/** Creates a resource, crashes each of its steps as planned, and waits for its final phase. */
async function crashed(kind: ResourceKind, obj: Obj, plans: PlannedKill[]): Promise<{ final: Obj; kills: Kill[] }> {
  const path = kind === 'DataUpload' ? uploads(w.app) : downloads(w.app);
  const created = await w.cluster.kube.create(path, obj);
  let finished = false;
  const killing = Promise.all(
    plans.map((p) => crashStep(kind, w.app, obj.metadata.name, created.metadata.uid, p, () => finished)),
  );
  try {
    const { final } = await watchUntil(
      w.cluster,
      `${path}/${obj.metadata.name}`,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
    );
    return { final, kills: await killing };
  } finally {
    finished = true;
  }
}

interface PairResult {
  lines: string[];
  hits: number[];
  kills: Kill[];
  failures: string[];
}

/** One DataUpload and (when `restore`) a DataDownload of it, both crashed; checks their outcome and data. */
async function pair(
  i: number,
  uploadPlan: PlannedKill[],
  downloadPlan: PlannedKill[] | undefined,
): Promise<PairResult> {
  const result: PairResult = { lines: [], hits: [], kills: [], failures: [] };
  const describeKills = (kills: Kill[]) =>
    kills.map((k) => `${k.step}@${k.delayMs}ms${k.hit ? '' : ' (missed)'}`).join(', ');
  const name = `du-${String(i).padStart(2, '0')}`;
  // a volume of its own, so every backup moves new data and every restore has exactly one right answer
  const source = (await boundClaim(w.cluster, w.app, `data-${i}`, '64Mi')).path;
  await makeFixtureTree(source, { smallFiles: 100, bigFile: 12 * mib, seed: seed + i });
  const up = await crashed('DataUpload', dataUpload(name, w.location, { sourcePVC: `data-${i}` }), uploadPlan);
  result.lines.push(`${summary(up.final)}; kills ${describeKills(up.kills)}`);
  result.hits.push(up.kills.filter((k) => k.hit).length);
  result.kills.push(...up.kills);
  if (up.final.status.phase !== 'Completed') {
    result.failures.push(`${name} ended ${up.final.status.phase}: ${up.final.status.message}`);
    return result;
  }
  result.failures.push(...(await settledLeftovers(w.cluster, up.final.metadata.uid)).map((l) => `${name} left ${l}`));
  if (!downloadPlan) return result;
  const target = `restored-${i}`;
  const down = await crashed(
    'DataDownload',
    dataDownload(`dd-${String(i).padStart(2, '0')}`, w.location, {
      targetPVC: { name: target },
      source: { dataUpload: { name, namespace: w.app } },
    }),
    downloadPlan,
  );
  result.lines.push(`${summary(down.final)}; kills ${describeKills(down.kills)}`);
  result.hits.push(down.kills.filter((k) => k.hit).length);
  result.kills.push(...down.kills);
  if (down.final.status.phase !== 'Completed') {
    result.failures.push(`${down.final.metadata.name} ended ${down.final.status.phase}: ${down.final.status.message}`);
    return result;
  }
  const pvc = await w.cluster.kube.get(`${claims(w.app)}/${target}`);
  const diffs = await compareTrees(source, await volumePath(w.cluster, pvc.spec.volumeName));
  result.failures.push(...diffs.slice(0, 5).map((d) => `${down.final.metadata.name}: ${d}`));
  result.failures.push(
    ...(await settledLeftovers(w.cluster, down.final.metadata.uid)).map((l) => `${down.final.metadata.name} left ${l}`),
  );
  return result;
}

/** Every kill of every run, drawn from the seed before anything runs, so a seed always means the same plan. */
function plan(): { upload: PlannedKill[]; download?: PlannedKill[] }[] {
  const random = seededRandom(seed);
  const draw = (kind: ResourceKind) =>
    stepsOf[kind].map((step) => ({ step, delayMs: seededInt(random, 0, maxDelayMs[step]) }));
  return Array.from({ length: Math.ceil(runs / 2) }, (_, i) => ({
    upload: draw('DataUpload'),
    download: 2 * i + 1 < runs ? draw('DataDownload') : undefined,
  }));
}

describe(
  `crash and resume (seed ${seed}, ${runs} runs; FERRY_CRASH_SEED=${seed} replays it)`,
  { timeout: 60 * 60_000 },
  () => {
    it('every step SIGKILLed at a random moment: all Completed with correct data, nothing left, the repository clean', async (t) => {
      const started = Date.now();
      const plans = plan();
      const results: PairResult[] = [];
      let next = 0;
      const worker = async () => {
        while (next < plans.length) {
          const i = next++;
          results[i] = await pair(i, plans[i]!.upload, plans[i]!.download);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, plans.length) }, worker));
      for (const line of results.flatMap((r) => r.lines)) t.diagnostic(line);
      const hits = results.flatMap((r) => r.hits);
      t.diagnostic(
        `${hits.reduce((a, b) => a + b, 0)} processes killed over ${hits.length} runs in ${((Date.now() - started) / 1000).toFixed(0)} s (seed ${seed})`,
      );
      assert.deepEqual(
        results.flatMap((r) => r.failures),
        [],
      );
      assert.equal(hits.length, runs);
      // a kill misses when its step finished first; over the runs, every kind of step must have been hit
      const kills = results.flatMap((r) => r.kills);
      assert.ok(
        kills.filter((k) => k.hit).length >= runs,
        `fewer processes killed than runs (kills per run: ${hits.join(' ')})`,
      );
      for (const step of new Set(kills.map((k) => k.step)))
        assert.ok(
          kills.some((k) => k.step === step && k.hit),
          `no ${step} step was ever killed`,
        );

      // what the killed steps left in the repository: locks, all of dead step pods, which the steps' rule removes
      const pods = (
        await w.cluster.kube.get(
          `/api/v1/namespaces/${ferryNamespace}/pods?labelSelector=${encodeURIComponent('app.kubernetes.io/name=ferry')}`,
        )
      ).items as KubeObject[];
      const repo = await w.repository(w.app);
      try {
        const kept: string[] = [];
        const removed = await removeLocksWhere(lockStore(repo), (info) => {
          const reason = deadStepReason(info.hostname, pods);
          if (!reason) kept.push(info.hostname);
          return reason;
        });
        t.diagnostic(`${removed.length} lock(s) of killed steps removed`);
        assert.deepEqual(kept, [], 'every lock left in the repository belongs to a dead step pod');
      } finally {
        await repo.close();
      }
      await w.resticCheck(w.app, true);
      t.diagnostic(`wall time ${((Date.now() - started) / 1000).toFixed(0)} s`);
    });
  },
);
