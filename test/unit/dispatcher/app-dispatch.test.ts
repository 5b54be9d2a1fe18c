// AppBackups and AppRestores get one step Job at a time: the first when a creation is stored, the next from the
// sweep while the resource is unfinished and no attempt runs, none twice, and after 5 failed attempts the sweep
// writes phase Failed with what the last Job said. A deleted unfinished AppBackup gets its step to cancel and clean
// up, whatever attempts failed before; expired AppBackups are deleted unless a restore reads them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appChanged, appMaxAttempts } from '../../../src/dispatcher/app.ts';
import { appExpiryVerdict } from '../../../src/dispatcher/expiry.ts';
import { sweep } from '../../../src/dispatcher/sweep.ts';
import { appJobName } from '../../../src/shared/app/jobs.ts';
import type { AppResource } from '../../../src/shared/app/jobs.ts';
import { appBackupFinalizer } from '../../../src/shared/app/names.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { labels } from '../../../src/shared/step-job/contract.ts';
import { appBackup, appRestore, appWorld } from './app-world.ts';
import { ferryNamespace, finishJob, jobs } from './world.ts';
import type { World } from './world.ts';

const key = (r: AppResource) => ({ kind: r.kind, namespace: r.metadata.namespace!, name: r.metadata.name });

function deps(w: World) {
  return w.dispatcher.context;
}

function jobsOf(w: World, r: AppResource): KubeObject[] {
  return jobs(w.kube).filter((j) => j.metadata.labels?.[labels.uid] === r.metadata.uid);
}

/** Stores `r` and lets the dispatcher act on its creation. */
async function create(w: World, r: AppResource): Promise<AppResource> {
  w.kube.seed(r);
  const stored = w.kube.peek<AppResource>(key(r))!;
  await appChanged({ after: stored }, deps(w));
  return stored;
}

function failAll(w: World, r: AppResource, message = 'BackoffLimitExceeded'): void {
  for (const j of jobsOf(w, r)) if (!j.status) finishJob(w.kube, j.metadata.name, 'Failed', undefined, message);
}

describe('AppBackup and AppRestore dispatch', () => {
  it('starts the app-backup step Job from its template when an AppBackup is created', async () => {
    const w = appWorld();
    const ab = await create(w, appBackup('db'));
    const [job, ...more] = jobsOf(w, ab);
    assert.equal(more.length, 0);
    assert.equal(job.metadata.name, appJobName(ab.metadata.uid!, 1));
    assert.match(job.metadata.name, /^ferry-app-[0-9a-f]{16}-a1$/);
    assert.equal(job.metadata.namespace, ferryNamespace);
    const pod = (job.spec as any).template;
    assert.deepEqual(pod.spec.containers[0].args, ['app-backup', 'app/db']);
    assert.equal(pod.spec.serviceAccountName, 'ferry-step-app-backup');
    for (const l of [job.metadata.labels!, pod.metadata.labels])
      assert.deepEqual(
        [l[labels.kind], l[labels.name], l[labels.namespace], l[labels.uid], l[labels.step], l[labels.attempt]],
        ['AppBackup', 'db', 'app', ab.metadata.uid, 'app-backup', '1'],
      );
  });

  it('starts the app-restore step for an AppRestore', async () => {
    const w = appWorld();
    const ar = await create(w, appRestore('back', undefined, {}, 'other'));
    const [job] = jobsOf(w, ar);
    assert.deepEqual((job.spec as any).template.spec.containers[0].args, ['app-restore', 'other/back']);
    assert.equal((job.spec as any).template.spec.serviceAccountName, 'ferry-step-app-restore');
  });

  it('never starts a second Job while one runs, from the webhook or the sweep', async () => {
    const w = appWorld();
    const ab = await create(w, appBackup('db'));
    await appChanged({ after: ab }, deps(w));
    await appChanged({ after: { ...ab, status: { phase: 'InProgress' } } as AppResource, before: ab }, deps(w));
    const report = await sweep(w.dispatcher);
    assert.deepEqual(report.dispatched, []);
    assert.equal(jobsOf(w, ab).length, 1);
    const metrics = await w.metrics.render();
    assert.match(
      metrics,
      /ferry_dispatcher_dispatches_total\{kind="AppBackup",step="app-backup",result="created"\} 1\n/,
    );
  });

  it('the sweep starts a lost first attempt, retries failed ones, and gives up after 5 with the Job message', async () => {
    const w = appWorld();
    w.kube.seed(appBackup('db', 'InProgress'));
    const ab = w.kube.peek<AppResource>(key(appBackup('db')))!;
    for (let attempt = 1; attempt <= appMaxAttempts; attempt++) {
      const report = await sweep(w.dispatcher);
      assert.deepEqual(report.dispatched, [`AppBackup app/db: app-backup attempt ${attempt}`]);
      failAll(w, ab, `pod failed on attempt ${attempt}`);
    }
    const last = await sweep(w.dispatcher);
    assert.equal(last.dispatched.length, 0);
    assert.equal(jobsOf(w, ab).length, appMaxAttempts);
    const failed = w.kube.peek<AppResource>(key(ab))!;
    assert.equal(failed.status?.phase, 'Failed');
    assert.match(failed.status!.message!, /step app-backup failed 5 times/);
    assert.match(failed.status!.message!, /pod failed on attempt 5/);
    assert.ok(failed.status && 'completionTimestamp' in failed.status);
    assert.ok(w.kube.all('Event').some((e) => e.reason === 'Failed'));
    // given up is final: nothing more, but for what its finalizer says is owed (below)
    assert.deepEqual((await sweep(w.dispatcher)).dispatched, []);
  });

  it('an AppBackup given up between its hooks still gets its step, which owes the post hooks, until it lets go', async () => {
    const w = appWorld();
    w.kube.seed(appBackup('db', 'InProgress', {}, { finalizers: [appBackupFinalizer] }));
    const ab = w.kube.peek<AppResource>(key(appBackup('db')))!;
    w.kube.mutate(key(ab), (o) => void ((o.status as Record<string, unknown>).hooksStarted = true));
    for (let attempt = 1; attempt <= appMaxAttempts; attempt++) {
      await sweep(w.dispatcher);
      failAll(w, ab);
    }
    const given = await sweep(w.dispatcher);
    assert.equal(given.failed.length, 1, given.failed.join('; '));
    assert.equal(w.kube.peek<AppResource>(key(ab))!.status?.phase, 'Failed');
    assert.deepEqual((await sweep(w.dispatcher)).dispatched, [
      `AppBackup app/db: app-backup attempt ${appMaxAttempts + 1}`,
    ]);
    // the step ran its post hooks and removed its finalizer: nothing more
    w.kube.mutate(key(ab), (o) => void (o.metadata.finalizers = []));
    failAll(w, ab);
    assert.deepEqual((await sweep(w.dispatcher)).dispatched, []);
  });

  it('leaves a finished resource alone, and a Job that just finished to settle', async () => {
    const w = appWorld();
    w.kube.seed(appBackup('done', 'Completed'), appBackup('late', 'Uploading'), appRestore('r', 'PartiallyFailed'));
    const late = w.kube.peek<AppResource>({ kind: 'AppBackup', namespace: 'app', name: 'late' })!;
    await sweep(w.dispatcher);
    finishJob(w.kube, appJobName(late.metadata.uid!, 1), 'Failed', new Date().toISOString());
    const report = await sweep(w.dispatcher);
    assert.deepEqual(report.dispatched, []);
    assert.deepEqual(
      jobs(w.kube).map((j) => j.metadata.labels?.[labels.name]),
      ['late'],
    );
  });

  it('a deleted unfinished AppBackup gets its step, even after its attempts ran out; a deleted finished one does not', async () => {
    const w = appWorld();
    const ab = await create(w, appBackup('db', 'Uploading', {}, { finalizers: [appBackupFinalizer] }));
    for (let i = 1; i < appMaxAttempts; i++) {
      failAll(w, ab);
      await sweep(w.dispatcher);
    }
    failAll(w, ab);
    await w.kube.delete(key(ab));
    const deleting = w.kube.peek<AppResource>(key(ab))!;
    assert.ok(deleting.metadata.deletionTimestamp);
    const decision = await appChanged({ before: ab, after: deleting }, deps(w));
    assert.deepEqual(decision, { action: 'run', attempt: appMaxAttempts + 1 });
    assert.equal(w.kube.peek<AppResource>(key(ab))!.status?.phase, 'Uploading', 'a deletion is never given up');

    // finished but still holding the finalizer (a step that died before removing it): the step runs to release it
    const held = appBackup('held', 'Completed', {}, { finalizers: [appBackupFinalizer] });
    w.kube.seed(held);
    await w.kube.delete(key(held));
    assert.deepEqual(
      (await sweep(w.dispatcher)).dispatched.filter((d) => d.includes('held')),
      ['AppBackup app/held: app-backup attempt 1'],
    );
    const free = appBackup('free', 'Completed');
    w.kube.seed({ ...free, metadata: { ...free.metadata, deletionTimestamp: '2025-01-02T00:00:00Z' } });
    await sweep(w.dispatcher);
    assert.equal(jobsOf(w, free).length, 0);
  });

  it('a cancel of an unfinished resource whose attempt ended starts its step at once; a running one is left to see it', async () => {
    const w = appWorld();
    const ab = await create(w, appBackup('db', 'Uploading'));
    const canceled = { ...ab, spec: { ...ab.spec, cancel: true } } as AppResource;
    assert.deepEqual(await appChanged({ before: ab, after: canceled }, deps(w)), {
      action: 'none',
      why: `Job ${appJobName(ab.metadata.uid!, 1)} is running`,
    });
    failAll(w, ab);
    assert.deepEqual(await appChanged({ before: ab, after: canceled }, deps(w)), { action: 'run', attempt: 2 });
    assert.equal(
      await appChanged({ before: canceled, after: canceled }, deps(w)),
      undefined,
      'only the change starts it',
    );
  });

  it('the sweep keeps the Jobs of AppBackups that exist and removes those of AppBackups that are gone', async () => {
    const w = appWorld();
    const ab = await create(w, appBackup('db', 'Uploading'));
    const gone = appBackup('gone', 'Uploading');
    const old = '2025-01-01T00:00:00Z';
    for (const r of [ab, gone]) {
      const name = appJobName(r.metadata.uid!, 9);
      w.kube.seed({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name,
          namespace: ferryNamespace,
          creationTimestamp: old,
          labels: { [labels.uid]: r.metadata.uid!, [labels.step]: 'app-backup', [labels.attempt]: '9' },
        },
        spec: {},
      });
    }
    const report = await sweep(w.dispatcher);
    assert.deepEqual(report.deleted, [`Job ${appJobName(gone.metadata.uid!, 9)}`]);
    assert.equal(jobsOf(w, ab).length, 2);
  });
});

describe('AppBackup expiry', () => {
  const now = Date.parse('2025-02-01T00:00:00Z');

  it('deletes an expired finished AppBackup; keeps a running one, an unexpired one and one a restore reads', async () => {
    const w = appWorld();
    w.kube.seed(
      appBackup('old', 'Completed', { expire: '24h' }),
      appBackup('running', 'Uploading', { expire: '24h' }),
      appBackup('young', 'Completed', { expire: '9000h' }),
      appBackup('read', 'PartiallyFailed', { expire: '1h' }),
      appBackup('forever', 'Completed'),
      appRestore('restoring', 'InProgress', { appBackup: { name: 'read', namespace: 'app' } }, 'other'),
      appRestore('done', 'Completed', { appBackup: { name: 'old' } }),
    );
    const restores = w.kube.all('AppRestore') as AppResource[];
    const verdicts = Object.fromEntries(
      (w.kube.all('AppBackup') as AppResource[]).map((ab) => [
        ab.metadata.name,
        appExpiryVerdict(ab as any, restores as any, now),
      ]),
    );
    assert.deepEqual(verdicts, {
      old: { expire: true },
      running: { expire: false, why: 'still running' },
      young: { expire: false, why: 'not expired yet' },
      read: { expire: false, why: 'AppRestore other/restoring is reading it' },
      forever: { expire: false, why: 'no spec.expire' },
    });
    const report = await sweep(w.dispatcher);
    assert.ok(report.deleted.includes('AppBackup app/old: expired (spec.expire 24h)'), report.deleted.join('; '));
    assert.equal(w.kube.peek({ kind: 'AppBackup', namespace: 'app', name: 'old' }), undefined);
    assert.ok(w.kube.peek({ kind: 'AppBackup', namespace: 'app', name: 'running' }));
  });
});
