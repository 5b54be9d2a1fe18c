// Issue 6, operator signals, on the cluster in a box: a backup and its restore are followed the way an operator
// would, without a metrics stack or log search. Every phase transition leaves an Event on the resource, every step
// pod ends with a JSON termination message (outcome, reason, counters), step logs are JSON lines naming the
// resource, status carries the backup's figures and a Progress% printer column that is a number during and after
// the transfer, and the dispatcher's /metrics counts the dispatch the DataUpload caused and shows a BackupSchedule's
// health from its status.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { labels } from '../../src/shared/step-job/contract.ts';
import { installFerry } from '../support/ferry-install.ts';
import {
  api,
  boundClaim,
  dataDownload,
  dataUpload,
  downloads,
  ferryNamespace,
  summary,
  uploads,
  watchUntil,
  world,
} from './world.ts';
import type { Obj, World } from './world.ts';

const run = promisify(execFile);
const phaseTimeoutMs = 10 * 60_000;
let w: World & { app: string; other: string };

before(
  async () => {
    w = await world('signals', ({ app, other }) => ({
      allowedNamespaces: [app, other],
      crossNamespaceRestores: [{ from: app, to: [other] }],
    }));
    const { path } = await boundClaim(w.cluster, w.app, 'data', '256Mi');
    await writeFile(join(path, 'random.bin'), randomBytes(24 << 20));
    for (let i = 0; i < 200; i++) await writeFile(join(path, `note-${i}.txt`), `note ${i}\n`.repeat(i + 1));
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

/** The dispatcher's metrics as sample name (with labels) -> value. */
async function scrape(metricsUrl: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${metricsUrl}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
  return new Map(
    text
      .split('\n')
      .filter((l) => l && !l.startsWith('#'))
      .map((l) => {
        const at = l.lastIndexOf(' ');
        return [l.slice(0, at), Number(l.slice(at + 1))];
      }),
  );
}

interface Ended {
  pod: string;
  step: string;
  exitCode: number;
  message: string;
}

/** Samples the step pods of a resource until stopped: finalize removes the transfer's pod soon after it ends. */
interface Sampler {
  ended(): Ended[];
  stop(): Promise<Ended[]>;
}

function samplePods(uid: string): Sampler {
  const ended = new Map<string, Ended>();
  let running = true;
  const loop = (async () => {
    while (running) {
      // a slow apiserver answer is skipped; the next sample comes 300 ms later
      const pods = await w.cluster.kube
        .get(`/api/v1/namespaces/${ferryNamespace}/pods?labelSelector=${encodeURIComponent(`${labels.uid}=${uid}`)}`)
        .catch(() => ({ items: [] }));
      for (const pod of pods.items as Obj[]) {
        const t = pod.status?.containerStatuses?.find((c: Obj) => c.name === 'step')?.state?.terminated;
        if (t)
          ended.set(pod.metadata.name, {
            pod: pod.metadata.name,
            step: pod.metadata.labels[labels.step],
            exitCode: t.exitCode,
            message: t.message ?? '',
          });
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  })();
  return {
    ended: () => [...ended.values()],
    async stop() {
      running = false;
      await loop;
      return [...ended.values()];
    },
  };
}

/** Waits until the sampler has seen a finished pod of each step (finalize's ends just after the final phase). */
async function untilSteps(sampler: Sampler, steps: string[]): Promise<Ended[]> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const got = sampler.ended();
    if (steps.every((s) => got.some((e) => e.step === s && e.exitCode === 0)) || Date.now() > deadline)
      return sampler.stop();
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function eventsOf(ns: string, uid: string): Promise<Obj[]> {
  const list = await w.cluster.kube.get(
    `/apis/events.k8s.io/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(`regarding.uid=${uid}`)}`,
  );
  return (list.items as Obj[]).sort(
    (a, b) =>
      Date.parse(a.eventTime ?? a.metadata.creationTimestamp) - Date.parse(b.eventTime ?? b.metadata.creationTimestamp),
  );
}

/** The Progress% cell `kubectl get` prints for one resource. */
async function progressColumn(resource: string, ns: string, name: string): Promise<string> {
  const { stdout } = await run('kubectl', ['--kubeconfig', w.cluster.kubeconfig, 'get', resource, name, '-n', ns], {
    encoding: 'utf8',
  });
  const [header, row] = stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));
  return row[header.indexOf('PROGRESS%')];
}

function checkTerminations(ended: Ended[], steps: string[]): void {
  for (const step of steps) {
    const mine = ended.filter((e) => e.step === step && e.exitCode === 0);
    assert.ok(mine.length > 0, `a finished ${step} pod among ${JSON.stringify(ended)}`);
    const parsed = mine.map(
      (e) => JSON.parse(e.message) as { outcome: string; reason: string; counters?: Record<string, number> },
    );
    const advanced = parsed.find((m) => m.outcome === 'Advanced');
    assert.ok(advanced, `the ${step} pod's termination message says it advanced: ${JSON.stringify(parsed)}`);
    assert.ok(advanced.reason.length > 0);
    for (const v of Object.values(advanced.counters ?? {})) assert.equal(typeof v, 'number');
  }
}

/** Every line a step pod logged is a JSON object naming the resource. */
async function checkLogs(pod: string, resource: string): Promise<void> {
  const lines = (await w.cluster.podLogs(ferryNamespace, pod)).split('\n').filter(Boolean);
  assert.ok(lines.length > 0, `pod ${pod} logged something`);
  for (const line of lines) {
    const obj = JSON.parse(line) as Obj;
    assert.equal(obj.resource, resource, line);
    assert.ok(obj.time && obj.level && obj.msg, line);
  }
}

describe('operator signals', { timeout: 30 * 60_000 }, () => {
  let upload: Obj;

  it('a backup: Events for each transition, termination messages, JSON logs, stats, Progress% and a counted dispatch', async (t) => {
    const { metricsUrl } = await installFerry(w.cluster);
    const key = 'ferry_dispatcher_dispatches_total{kind="DataUpload",step="snapshot",result="created"}';
    const before = (await scrape(metricsUrl)).get(key) ?? 0;
    const created = await w.cluster.kube.create(uploads(w.app), dataUpload('signals', w.location));
    const sampler = samplePods(created.metadata.uid);
    // a failed assertion must not leave the sampler polling, which keeps this file's process alive until its timeout
    t.after(() => sampler.stop());
    // the dispatcher starts the step once it has read the stored DataUpload back, just after admitting it
    const deadline = Date.now() + 30_000;
    let after = (await scrape(metricsUrl)).get(key) ?? 0;
    while (after < before + 1 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      after = (await scrape(metricsUrl)).get(key) ?? 0;
    }
    assert.ok(after >= before + 1, `${key} went from ${before} to ${after}`);

    const path = `${uploads(w.app)}/signals`;
    const percent = async () => (await w.cluster.kube.get(path)).status?.progress?.percent;
    const { final, seen } = await watchUntil(
      w.cluster,
      path,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
      percent,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    t.diagnostic(summary(final));
    upload = final;
    const during = seen.filter((s) => s.phase === 'InProgress').map((s) => s.extra);
    assert.ok(
      during.length > 0 && during.every((p) => typeof p === 'number' && p >= 0 && p <= 100),
      `percent during the transfer: ${JSON.stringify(during)}`,
    );
    assert.equal(await progressColumn('datauploads', w.app, 'signals'), '100');

    const stats = final.status.stats;
    assert.ok(stats.files >= 200 && stats.bytes >= 24 << 20, JSON.stringify(stats));
    assert.ok(
      stats.bytesAdded >= 24 << 20 && stats.bytesStored > 0 && stats.durationSeconds > 0,
      JSON.stringify(stats),
    );

    const events = await eventsOf(w.app, final.metadata.uid);
    const reasons = events.map((e) => e.reason);
    // New > Accepted > Prepared > InProgress > Finalizing > Completed
    for (const r of ['SnapshotReady', 'Exposed', 'TransferStarted', 'DataMoved', 'Completed'])
      assert.ok(reasons.includes(r), `Event ${r} among ${reasons.join(', ')}`);
    for (const e of events) {
      assert.match(e.reportingController, /^ferry\.dev\/(step-[a-z]+|dispatcher)$/);
      assert.ok(e.note.length > 10, `a note a person can read: ${e.note}`);
    }

    const steps = ['snapshot', 'expose', 'transfer', 'finalize'];
    const ended = await untilSteps(sampler, steps);
    checkTerminations(ended, steps);
    const transfer = JSON.parse(ended.find((e) => e.step === 'transfer' && e.exitCode === 0)!.message);
    assert.equal(transfer.counters.files, stats.files);
    assert.equal(transfer.counters.bytesAdded, stats.bytesAdded);
    for (const e of ended.filter((x) => x.exitCode === 0)) await checkLogs(e.pod, `DataUpload/${w.app}/signals`);
  });

  it('a restore: Events for each transition and termination messages of its steps', async (t) => {
    assert.ok(upload, 'needs the backup of the first test');
    const created = await w.cluster.kube.create(
      downloads(w.other),
      dataDownload('signals', w.location, { source: { dataUpload: { name: 'signals', namespace: w.app } } }),
    );
    const sampler = samplePods(created.metadata.uid);
    t.after(() => sampler.stop());
    const { final } = await watchUntil(
      w.cluster,
      `${downloads(w.other)}/signals`,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    t.diagnostic(summary(final));
    assert.equal(await progressColumn('datadownloads', w.other, 'signals'), '100');
    assert.ok(final.status.stats.files >= 200, JSON.stringify(final.status.stats));
    const reasons = (await eventsOf(w.other, final.metadata.uid)).map((e) => e.reason);
    // New > Prepared > InProgress > Finalizing > Completed
    for (const r of ['Exposed', 'TransferStarted', 'DataMoved', 'Completed'])
      assert.ok(reasons.includes(r), `Event ${r} among ${reasons.join(', ')}`);
    const steps = ['expose', 'transfer', 'finalize'];
    const ended = await untilSteps(sampler, steps);
    checkTerminations(ended, steps);
  });

  it("a BackupSchedule's health in /metrics, read from its status across namespaces", async () => {
    const { metricsUrl } = await installFerry(w.cluster);
    await w.cluster.kube.create(`${api}/namespaces/${w.app}/backupschedules`, {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name: 'paused' },
      spec: { schedule: '0 3 * * *', pvcs: ['data'], backupStorageLocation: w.location, suspend: true },
    });
    const labelText = `{namespace="${w.app}",schedule="paused"}`;
    // the dispatcher lists schedules at most every few seconds
    const deadline = Date.now() + 60_000;
    let samples = await scrape(metricsUrl);
    while (!samples.has(`ferry_schedule_suspended${labelText}`) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 2000));
      samples = await scrape(metricsUrl);
    }
    assert.equal(samples.get(`ferry_schedule_suspended${labelText}`), 1);
    assert.equal(samples.get(`ferry_schedule_missed_runs${labelText}`), 0);
    assert.equal(
      samples.get(`ferry_schedule_last_run_outcome{namespace="${w.app}",schedule="paused",outcome="Succeeded"}`),
      0,
    );
  });
});
