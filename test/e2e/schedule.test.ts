// Issue 5, BackupSchedule end to end: invalid cron expressions and time zones are denied at admission naming the
// field; a schedule firing every minute backs up on time the PVCs it names and those its selector matches,
// including one created after the schedule; suspend stops the runs and resume restarts them; deleting the schedule
// takes its CronJob (garbage collection) and keeps its backups.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { KubeError } from '../cluster/kube.ts';
import { randomBytes } from '../support/repo.ts';
import { api, boundClaim, claims, uploads, world } from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
const name = 'every-minute';
const schedules = (ns: string): string => `${api}/namespaces/${ns}/backupschedules`;
const cronJobs = (ns: string): string => `/apis/batch/v1/namespaces/${ns}/cronjobs`;
const minute = 60_000;

before(
  async () => {
    w = await world('schedule', ({ app }) => ({ allowedNamespaces: [app] }));
    const { path } = await boundClaim(w.cluster, w.app, 'data', '16Mi');
    await writeFile(join(path, 'data.bin'), randomBytes(256 * 1024, 7));
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

function backupSchedule(scheduleName: string, spec: Obj): Obj {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: scheduleName },
    spec: { pvcs: ['data'], backupStorageLocation: w.location, ...spec },
  };
}

async function refusal(obj: Obj): Promise<string> {
  try {
    await w.cluster.kube.create(schedules(w.app), obj);
  } catch (err) {
    if (err instanceof KubeError) return err.message;
    throw err;
  }
  throw new Error(`BackupSchedule ${obj.metadata.name} was admitted`);
}

/** This schedule's DataUploads, by run id. */
async function runs(): Promise<Map<string, Obj[]>> {
  const list = await w.cluster.kube.get(
    `${uploads(w.app)}?labelSelector=${encodeURIComponent(`ferry.dev/schedule=${name}`)}`,
  );
  const byRun = new Map<string, Obj[]>();
  for (const du of list.items) {
    const run = du.metadata.labels['ferry.dev/run'];
    byRun.set(run, [...(byRun.get(run) ?? []), du]);
  }
  return byRun;
}

const scheduledAt = (du: Obj): number => Date.parse(du.metadata.annotations['ferry.dev/scheduled-time']);

/** Waits for a run due after `since` with DataUploads for exactly `pvcs`, all ended; returns them. */
async function runAfter(since: number, pvcs: string[], timeoutMs: number): Promise<Obj[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (const [, dus] of [...(await runs())].sort(([a], [b]) => a.localeCompare(b))) {
      if (scheduledAt(dus[0]) <= since) continue;
      const names = dus.map((d) => d.spec.sourcePVC).sort();
      if (JSON.stringify(names) !== JSON.stringify(pvcs)) continue;
      if (dus.every((d) => ['Completed', 'Failed', 'Canceled'].includes(d.status?.phase))) return dus;
    }
    if (Date.now() > deadline)
      throw new Error(
        `no run due after ${new Date(since).toISOString()} backed up ${pvcs.join(', ')} within ${timeoutMs / 1000} s; runs: ${JSON.stringify([...(await runs()).entries()].map(([r, d]) => [r, d.map((x) => `${x.spec.sourcePVC}:${x.status?.phase}`)]))}`,
      );
    await new Promise((r) => setTimeout(r, 2000));
  }
}

describe('BackupSchedule', { timeout: 40 * 60_000 }, () => {
  it('denies an invalid cron expression or time zone at admission, naming the field', async () => {
    const cases: [string, Obj, RegExp][] = [
      ['bad-minute', { schedule: '61 * * * *' }, /spec\.schedule: 61 in the minute field is out of range 0-59/],
      ['zero-step', { schedule: '*/0 * * * *' }, /spec\.schedule: the step "\/0" in the minute field/],
      ['four-fields', { schedule: '* * * *' }, /spec\.schedule/],
      [
        'bad-zone',
        { schedule: '@daily', timeZone: 'Mars/Olympus_Mons' },
        /spec\.timeZone: "Mars\/Olympus_Mons" is not a time zone/,
      ],
      ['offset-zone', { schedule: '@daily', timeZone: '+01:00' }, /spec\.timeZone/],
    ];
    for (const [n, spec, message] of cases) assert.match(await refusal(backupSchedule(n, spec)), message, n);
    const left = await w.cluster.kube.get(schedules(w.app));
    assert.deepEqual(left.items, []);
  });

  it('runs every minute on time for named and selected PVCs (one created later); suspend stops, resume restarts; deletion keeps backups', async (t) => {
    const created = Date.now();
    await w.cluster.kube.create(
      schedules(w.app),
      backupSchedule(name, {
        schedule: '* * * * *',
        timeZone: 'Europe/Berlin',
        selector: { matchLabels: { backup: 'yes' } },
      }),
    );
    const cronJob = await w.cluster.kube.waitFor(
      `${cronJobs(w.app)}/ferry-schedule-${name}`,
      "the schedule's CronJob",
      (c) => c,
      5 * minute,
    );
    assert.equal(cronJob.metadata.ownerReferences[0].kind, 'BackupSchedule');
    assert.equal(cronJob.spec.timeZone, 'Europe/Berlin');
    t.diagnostic(`CronJob made ${((Date.now() - created) / 1000).toFixed(0)} s after the schedule`);

    // a PVC made after the schedule, matching its selector
    const { path } = await boundClaim(w.cluster, w.app, 'late', '16Mi');
    await writeFile(join(path, 'late.bin'), randomBytes(128 * 1024, 8));
    await w.cluster.kube.patch(`${claims(w.app)}/late`, { metadata: { labels: { backup: 'yes' } } });
    const labelled = Date.now();

    const run = await runAfter(labelled, ['data', 'late'], 12 * minute);
    for (const du of run) {
      assert.equal(du.status.phase, 'Completed', `${du.metadata.name}: ${du.status.message}`);
      const late = Date.parse(du.metadata.creationTimestamp) - scheduledAt(du);
      t.diagnostic(
        `${du.metadata.name}: created ${(late / 1000).toFixed(0)} s after its scheduled minute, Completed ${((Date.parse(du.status.completionTimestamp) - scheduledAt(du)) / 1000).toFixed(0)} s after`,
      );
      assert.ok(
        late >= 0 && late < 2 * minute,
        `${du.metadata.name} was created ${late / 1000} s after its scheduled time`,
      );
      assert.equal(new Date(scheduledAt(du)).getUTCSeconds(), 0);
    }
    const status = await w.cluster.kube.waitFor(
      `${schedules(w.app)}/${name}`,
      'the run recorded as succeeded',
      (s) =>
        s.status?.lastSuccessfulTime && Date.parse(s.status.lastSuccessfulTime) >= scheduledAt(run[0])
          ? s.status
          : undefined,
      3 * minute,
    );
    assert.ok(status.nextScheduleTime && status.lastScheduleTime);

    // suspend: the CronJob stops starting runs
    await w.cluster.kube.patch(`${schedules(w.app)}/${name}`, { spec: { suspend: true } });
    await w.cluster.kube.waitFor(
      `${cronJobs(w.app)}/ferry-schedule-${name}`,
      'the CronJob to be suspended',
      (c) => (c.spec.suspend === true ? true : undefined),
      5 * minute,
    );
    const suspended = Date.now();
    await new Promise((r) => setTimeout(r, 150_000));
    const during = [...(await runs()).values()].filter((dus) => scheduledAt(dus[0]) > suspended);
    assert.deepEqual(
      during.map((dus) => dus[0].metadata.labels['ferry.dev/run']),
      [],
      'no run was due while suspended',
    );

    // resume: runs start again
    await w.cluster.kube.patch(`${schedules(w.app)}/${name}`, { spec: { suspend: false } });
    await w.cluster.kube.waitFor(
      `${cronJobs(w.app)}/ferry-schedule-${name}`,
      'the CronJob to resume',
      (c) => (c.spec.suspend === false ? true : undefined),
      5 * minute,
    );
    const resumed = Date.now();
    const again = await runAfter(resumed, ['data', 'late'], 12 * minute);
    assert.ok(
      again.every((du) => du.status.phase === 'Completed'),
      JSON.stringify(again.map((d) => d.status)),
    );

    // deleting the schedule: its CronJob goes with it, its backups stay
    const before = [...(await runs()).values()].flat().length;
    await w.cluster.kube.delete(`${schedules(w.app)}/${name}`);
    await w.cluster.kube.waitFor(
      `${cronJobs(w.app)}?fieldSelector=metadata.name=ferry-schedule-${name}`,
      'the CronJob to be garbage-collected',
      (l) => (l.items.length === 0 ? true : undefined),
      5 * minute,
    );
    const kept = [...(await runs()).values()].flat().filter((du) => !du.metadata.deletionTimestamp).length;
    assert.ok(kept >= before, `${kept} of ${before} DataUploads remain`);
  });
});
