// The dispatcher against an in-memory cluster: the Jobs each transition starts, transfer limits, cancel, deletion,
// and the sweep's retries, give-ups and tidying.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import type { Resource } from '../../../src/shared/dispatch/status.ts';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import { sweep } from '../../../src/dispatcher/sweep.ts';
import { jobName, labels } from '../../../src/shared/step-job/contract.ts';
import { exposureName } from '../../../src/shared/step-job/names.ts';
import type { Phase } from '../../../src/shared/api/types.ts';
import { KubeError } from '../../../src/shared/kube/errors.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import type { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { claim, ferryNamespace, finishJob, jobs, review, upload, world } from './world.ts';
import type { World } from './world.ts';

const key = (r: Resource) => ({ kind: r.kind, namespace: r.metadata.namespace!, name: r.metadata.name });

async function allowed(w: World, body: AdmissionReview): Promise<void> {
  const result = await handleReview(body, w.handler);
  assert.equal(result.status, 200);
  const response = (result as { review: AdmissionReview }).review.response!;
  assert.equal(response.allowed, true, response.status?.message);
}

/** A step moving the stored resource to `phase`, through the webhook as the apiserver would; the dispatcher then acts. */
async function move(w: World, r: Resource, phase: Phase, extra: Record<string, unknown> = {}): Promise<Resource> {
  const old = w.kube.peek<Resource>(key(r))!;
  const next = { ...old, status: { ...old.status, phase, ...extra } } as Resource;
  await allowed(w, review('UPDATE', next, { old, subResource: 'status' }));
  const stored = await w.kube.replaceStatus(next);
  await w.settle();
  return stored;
}

function stepsOf(kube: MemoryKube, r?: Resource): string[] {
  return jobs(kube)
    .filter((j) => !r || j.metadata.labels?.['ferry.dev/uid'] === r.metadata.uid)
    .map((j) => `${j.metadata.labels?.['ferry.dev/step']}-${j.metadata.labels?.['ferry.dev/attempt']}`);
}

/** The claim the expose step makes for `r` (named and labelled after its uid), and the status it records. */
function exposed(w: World, r: Resource, mode = 'Filesystem'): Record<string, unknown> {
  const pvc = exposureName(r);
  const made = claim(ferryNamespace, pvc, 'Bound', mode);
  made.metadata.labels = { [labels.uid]: r.metadata.uid! };
  w.kube.seed(made);
  return { exposure: { namespace: ferryNamespace, pvc } };
}

async function created(w: World, r: Resource): Promise<Resource> {
  await allowed(w, review('CREATE', r));
  w.kube.seed(r);
  await w.settle();
  return w.kube.peek<Resource>(key(r))!;
}

describe('the dispatcher at admission', () => {
  it('starts each step as the phase moves on, once', async () => {
    const w = world();
    const r = await created(w, upload('walk'));
    assert.deepEqual(stepsOf(w.kube), ['snapshot-1']);
    await move(w, r, 'Accepted');
    await move(w, r, 'Prepared', exposed(w, r, 'Block'));
    await move(w, r, 'InProgress', { progress: { bytesDone: 1, totalBytes: 2, percent: 50 } });
    await move(w, r, 'InProgress', { progress: { bytesDone: 2, totalBytes: 2, percent: 100 } });
    await move(w, r, 'Finalizing');
    await move(w, r, 'Completed');
    assert.deepEqual(stepsOf(w.kube), ['snapshot-1', 'expose-1', 'transfer-1', 'finalize-1']);
    const transfer = w.kube.peek<KubeObject>({
      kind: 'Job',
      namespace: ferryNamespace,
      name: jobName('DataUpload', r.metadata.uid!, 'transfer', 1),
    }) as any;
    assert.deepEqual(transfer.spec.template.spec.containers[0].volumeDevices, [
      { name: 'ferry-volume', devicePath: '/ferry/device' },
    ]);
  });

  it('does nothing for a dry run', async () => {
    const w = world();
    const r = await created(w, upload('dry'));
    const old = w.kube.peek<Resource>(key(r))!;
    await allowed(
      w,
      review('UPDATE', { ...old, status: { phase: 'Accepted' } }, { old, subResource: 'status', dryRun: true }),
    );
    await w.settle();
    assert.deepEqual(stepsOf(w.kube), ['snapshot-1']);
  });

  it('still allows a change when the dispatch fails, and counts the failure', async () => {
    const w = world();
    await w.kube.delete({ kind: 'CronJob', namespace: ferryNamespace, name: 'ferry-step-snapshot' });
    const orphan = upload('orphan');
    await allowed(w, review('CREATE', orphan));
    w.kube.seed(orphan);
    await w.settle();
    assert.equal(jobs(w.kube).length, 0);
    assert.equal(w.metrics.dispatches.get({ kind: 'DataUpload', step: 'unknown', result: 'failed' }), 1);
    assert.ok(
      w.logs.some((l) => l.includes('The Job template CronJob ferry-system/ferry-step-snapshot does not exist')),
    );
  });

  it('cancels once the cancel request is stored, and finalizes the canceled resource', async () => {
    const w = world();
    const r = await created(w, upload('stop'));
    await move(w, r, 'Accepted');
    const old = w.kube.peek<Resource>(key(r))!;
    const canceled = { ...old, spec: { ...old.spec, cancel: true } } as Resource;
    await allowed(w, review('UPDATE', canceled, { old }));
    assert.equal(
      w.kube.peek<Resource>(key(r))!.status?.phase,
      'Accepted',
      'the status write waits until the change is stored',
    );
    await w.kube.replace(canceled);
    const before = w.kube.peek<Resource>(key(r))!;
    await w.settle();
    const stored = w.kube.peek<Resource>(key(r))!;
    assert.equal(stored.status?.phase, 'Canceling');
    assert.equal(stored.status?.message, 'Canceling from phase Accepted: spec.cancel is set.');
    assert.ok(w.kube.all('Event').some((e) => e.reason === 'Canceling'));
    // the dispatcher's own status write comes back through the webhook (replayed here: review, then the write stored)
    const rewound = await w.kube.replaceStatus({ ...stored, status: before.status } as Resource);
    await allowed(w, review('UPDATE', stored, { old: rewound, subResource: 'status' }));
    await w.kube.replaceStatus({ ...rewound, status: stored.status } as Resource);
    await w.settle();
    assert.deepEqual(stepsOf(w.kube, r), ['snapshot-1', 'expose-1', 'finalize-1']);
  });

  it('runs the delete step when a finished DataUpload is deleted', async () => {
    const w = world();
    const r = await created(
      w,
      upload('gone', undefined, {
        metadata: {
          name: 'gone',
          namespace: 'app',
          uid: 'f0000001-0000-4000-8000-000000000000',
          finalizers: ['ferry.dev/delete-repository-data'],
        },
      }),
    );
    await move(w, r, 'Completed');
    await allowed(w, review('DELETE', null, { old: w.kube.peek(key(r)) }));
    await w.kube.delete(key(r));
    await w.settle();
    assert.deepEqual(stepsOf(w.kube, r), ['snapshot-1', 'delete-1']);
  });
});

describe('the dispatcher under transfer limits', () => {
  async function prepared(w: World, names: string[]): Promise<Resource[]> {
    const out: Resource[] = [];
    for (const [i, name] of names.entries()) {
      const r = upload(name, 'Accepted', {}, `2025-01-01T00:0${i}:00Z`);
      w.kube.seed(r);
      out.push(w.kube.peek<Resource>(key(r))!);
    }
    for (const r of out) await move(w, r, 'Prepared', exposed(w, r));
    return out;
  }

  it('starts the oldest up to the cluster limit, queues the others with a reason, and starts them as slots free', async () => {
    const w = world({ limits: { cluster: 2, perNode: 0 } });
    const [a, b, c, d] = await prepared(w, ['a', 'b', 'c', 'd']);
    assert.deepEqual(
      jobs(w.kube)
        .map((j) => j.metadata.labels?.['ferry.dev/name'])
        .sort(),
      ['a', 'b'],
    );
    for (const r of [c, d]) {
      const queued = w.kube.peek<Resource>(key(r))!.status?.conditions?.find((x) => x.type === 'Queued');
      assert.equal(queued?.status, 'True');
      assert.equal(
        queued?.message,
        'Waiting for a transfer slot: 2 of 2 transfers allowed in the cluster are running.',
      );
    }
    assert.equal(w.metrics.dispatches.get({ kind: 'DataUpload', step: 'transfer', result: 'waiting' }) > 0, true);
    assert.deepEqual([w.metrics.transferring.get({}), w.metrics.waiting.get({})], [2, 2]);
    await move(w, a, 'InProgress');
    await move(w, a, 'Finalizing');
    assert.deepEqual(
      jobs(w.kube)
        .filter((j) => j.metadata.labels?.['ferry.dev/step'] === 'transfer')
        .map((j) => j.metadata.labels?.['ferry.dev/name'])
        .sort(),
      ['a', 'b', 'c'],
    );
    assert.equal(w.kube.peek<Resource>(key(c))!.status?.conditions?.find((x) => x.type === 'Queued')?.status, 'False');
    assert.equal(w.kube.peek<Resource>(key(d))!.status?.conditions?.find((x) => x.type === 'Queued')?.status, 'True');
    assert.deepEqual([w.metrics.transferring.get({}), w.metrics.waiting.get({})], [2, 1]);
    void b;
  });

  it('counts a transfer on the node its volume is tied to, without pinning it', async () => {
    const w = world({ limits: { cluster: 0, perNode: 1 } });
    const r = upload('local', 'Accepted');
    // node-1: where the least busy choice would put the next transfer, were this one not counted there
    w.kube.seed(r, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name: 'pv-local' },
      spec: {
        nodeAffinity: {
          required: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['node-1'] }] },
            ],
          },
        },
      },
    });
    const stored = w.kube.peek<Resource>(key(r))!;
    const exposure = exposed(w, stored);
    w.kube.mutate({ kind: 'PersistentVolumeClaim', namespace: ferryNamespace, name: exposureName(stored) }, (c) => {
      (c.spec as any).volumeName = 'pv-local';
    });
    await move(w, stored, 'Prepared', exposure);
    const [job] = jobs(w.kube).filter((j) => j.metadata.labels?.['ferry.dev/step'] === 'transfer') as any[];
    assert.equal(job.spec.template.spec.nodeSelector['kubernetes.io/hostname'], undefined);
    const second = upload('second', 'Accepted');
    w.kube.seed(second);
    await move(w, w.kube.peek<Resource>(key(second))!, 'Prepared', exposed(w, second));
    const pinned = jobs(w.kube).filter((j) => j.metadata.labels?.['ferry.dev/name'] === 'second') as any[];
    assert.equal(
      pinned[0].spec.template.spec.nodeSelector['kubernetes.io/hostname'],
      'node-2',
      'node-1 is taken by the first transfer',
    );
  });

  it('starts one transfer for one free slot when two resources become Prepared at the same moment', async () => {
    const w = world({ limits: { cluster: 1, perNode: 0 } });
    const rs = ['x', 'y'].map((n, i) => {
      const r = upload(n, 'Accepted', {}, `2025-01-01T00:0${i}:00Z`);
      w.kube.seed(r);
      return w.kube.peek<Resource>(key(r))!;
    });
    // both reviews are answered before either status write is stored, as the apiserver may do
    const next = rs.map((r) => ({ ...r, status: { phase: 'Prepared', ...exposed(w, r) } }) as Resource);
    await Promise.all(next.map((r, i) => allowed(w, review('UPDATE', r, { old: rs[i], subResource: 'status' }))));
    for (const r of next) await w.kube.replaceStatus(r);
    await w.settle();
    assert.equal(jobs(w.kube).filter((j) => j.metadata.labels?.['ferry.dev/step'] === 'transfer').length, 1);
  });

  it('pins transfers to nodes within the per-node limit', async () => {
    const w = world({ limits: { cluster: 0, perNode: 1 } });
    await prepared(w, ['a', 'b', 'c']);
    const pinned = jobs(w.kube)
      .filter((j) => j.metadata.labels?.['ferry.dev/step'] === 'transfer')
      .map((j) => (j.spec as any).template.spec.nodeSelector['kubernetes.io/hostname'])
      .sort();
    assert.deepEqual(pinned, ['node-1', 'node-2']);
  });
});

describe('the sweep', () => {
  const t0 = Date.parse('2025-01-01T00:00:00Z');

  it('starts what is due, retries failed steps as new attempts, then gives up with the reason', async () => {
    let now = t0;
    const w = world({ now: () => new Date(now) });
    const r = upload('flaky', 'Accepted');
    w.kube.seed(r);
    let report = await sweep(w.dispatcher);
    assert.deepEqual(report.dispatched, ['DataUpload app/flaky: expose attempt 1']);
    for (const attempt of [1, 2, 3]) {
      finishJob(
        w.kube,
        jobName('DataUpload', r.metadata.uid!, 'expose', attempt),
        'Failed',
        new Date(now).toISOString(),
        'Job has reached the specified backoff limit',
      );
      now += 60_000;
      report = await sweep(w.dispatcher);
    }
    assert.deepEqual(stepsOf(w.kube, r), ['expose-1', 'expose-2', 'expose-3']);
    assert.equal(report.failed.length, 1);
    const stored = w.kube.peek<Resource>(key(r))!;
    assert.equal(stored.status?.phase, 'Failing');
    assert.match(
      stored.status?.message ?? '',
      /^step expose failed 3 times; the last attempt \(Job ferry-up-\w+-expose-3\) said: BackoffLimitExceeded: Job has reached/,
    );
    assert.ok(w.kube.all('Event').some((e) => e.reason === 'Failing' && e.type === 'Warning'));
  });

  it('gives up a resource whose Job the apiserver refuses as invalid, instead of failing every sweep', async () => {
    const w = world();
    const r = upload('nightly', 'Accepted');
    w.kube.seed(r);
    // e.g. a template edited in Git into something the apiserver refuses
    w.kube.failNext(
      'create',
      'Job',
      new KubeError(422, 'Invalid', 'Job.batch "x" is invalid: spec.template.spec.containers[0].image: Required value'),
    );
    const report = await sweep(w.dispatcher);
    assert.deepEqual(report.errors, []);
    assert.equal(report.failed.length, 1);
    const stored = w.kube.peek<Resource>(key(r))!;
    assert.equal(stored.status?.phase, 'Failed');
    assert.match(stored.status?.message ?? '', /^ferry cannot start its expose step: Job.batch "x" is invalid/);
  });

  it('leaves running Jobs alone and cancels what asks to be canceled', async () => {
    const w = world();
    const busy = upload('busy', 'Accepted');
    const stop = upload('stop', 'Prepared', {
      spec: { sourcePVC: 'data', backupStorageLocation: 'default', cancel: true },
    });
    w.kube.seed(busy, stop);
    const first = await sweep(w.dispatcher);
    assert.deepEqual(first.canceled, ['DataUpload app/stop']);
    assert.equal(w.kube.peek<Resource>(key(stop))!.status?.phase, 'Canceling');
    const second = await sweep(w.dispatcher);
    assert.deepEqual(second.dispatched, ['DataUpload app/stop: finalize attempt 1']);
    assert.deepEqual(stepsOf(w.kube, busy), ['expose-1']);
  });

  it('removes Jobs of resources that are gone, once they are old enough', async () => {
    let now = t0;
    const w = world({ now: () => new Date(now) });
    w.kube.now = () => new Date(now);
    const r = upload('short-lived', 'Accepted');
    w.kube.seed(r);
    await sweep(w.dispatcher);
    await w.kube.delete(key(r));
    assert.deepEqual((await sweep(w.dispatcher)).deleted, [], 'a young Job may belong to a resource being created');
    now += 11 * 60_000;
    assert.deepEqual((await sweep(w.dispatcher)).deleted, [
      `Job ${jobName('DataUpload', r.metadata.uid!, 'expose', 1)}`,
    ]);
    assert.equal(jobs(w.kube).length, 0);
  });

  it('starts queued transfers oldest first within the limit', async () => {
    const w = world({ limits: { cluster: 1, perNode: 0 } });
    const young = upload('young', 'Prepared', {}, '2025-01-01T00:05:00Z');
    const old = upload('old', 'Prepared', {}, '2025-01-01T00:01:00Z');
    w.kube.seed(young, old);
    const report = await sweep(w.dispatcher);
    assert.deepEqual(report.dispatched, ['DataUpload app/old: transfer']);
    assert.deepEqual(report.waiting, ['DataUpload app/young']);
    assert.equal(w.kube.peek<Resource>(key(young))!.status?.conditions?.[0]?.reason, 'ConcurrencyLimit');
  });
});
