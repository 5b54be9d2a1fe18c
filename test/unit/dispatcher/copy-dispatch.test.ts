// DataCopies get one copy step Job per attempt: attempt 1 when a creation is stored, mounting both locations'
// Secrets; the next from the sweep only once the last failed and status.nextAttemptTime passed, however many
// failed before (copies never give up); a run on deletion (while the finalizer holds it) or cancel when none runs;
// nothing for a status write or a finished copy; their Jobs are never taken for orphans.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import { copyChanged, type CopyObject } from '../../../src/dispatcher/copy.ts';
import { sweep } from '../../../src/dispatcher/sweep.ts';
import { copyJobName } from '../../../src/shared/copy/step.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { labels } from '../../../src/shared/step-job/contract.ts';
import { ferryNamespace, finishJob, jobs, upload, world } from './world.ts';

const b64 = (s: string) => Buffer.from(s).toString('base64');

function copyWorld(limits = { cluster: 0, perNode: 0 }) {
  const clock = { ms: Date.parse('2026-03-01T12:00:00Z') };
  const w = world({ now: () => new Date(clock.ms), limits });
  w.kube.seed(
    yaml.load(readFileSync(join(import.meta.dirname, '..', '..', '..', 'jobs', 'copy.yaml'), 'utf8')) as KubeObject,
    {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name: 'site-b', namespace: ferryNamespace },
      spec: {
        s3: { endpoint: 'http://b.example:9000', bucket: 'b' },
        credential: { name: 's3-b' },
        repositoryPassword: { name: 'repo-b', key: 'password' },
        allowedNamespaces: ['*'],
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'repo-b', namespace: ferryNamespace },
      data: { password: b64('x') },
    },
    upload('nightly', 'Completed'),
  );
  return { w, clock };
}

let n = 0;
function dataCopy(status?: CopyObject['status'], extra: Partial<CopyObject['metadata']> = {}): CopyObject {
  n++;
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataCopy',
    metadata: {
      name: `nightly-b${n}`,
      namespace: 'app',
      uid: `c${n.toString(16).padStart(7, '0')}-0000-4000-8000-000000000000`,
      creationTimestamp: '2026-03-01T11:00:00Z',
      ...extra,
    },
    spec: { dataUpload: 'nightly', backupStorageLocation: 'site-b' },
    ...(status ? { status } : {}),
  };
}

const jobsOf = (w: ReturnType<typeof world>, dc: CopyObject) =>
  jobs(w.kube)
    .filter((j) => j.metadata.labels?.[labels.uid] === dc.metadata.uid)
    .map((j) => j.metadata.name)
    .sort();

describe('DataCopy dispatch', () => {
  it('starts attempt 1 on creation with both locations mounted, and nothing for a status write', async () => {
    const { w } = copyWorld();
    const dc = dataCopy();
    w.kube.seed(dc);
    const decision = await copyChanged({ after: dc }, w.dispatcher.context);
    assert.deepEqual(decision, { action: 'run', attempt: 1 });
    const [name] = jobsOf(w, dc);
    assert.equal(name, copyJobName(dc.metadata.uid!, 1));
    assert.match(name, /^ferry-copy-[0-9a-f]{16}-a1$/);
    const job = jobs(w.kube).find((j) => j.metadata.name === name)!;
    const pod = (job.spec as any).template.spec;
    assert.deepEqual(pod.containers[0].args, ['copy', `app/${dc.metadata.name}`]);
    assert.equal(pod.serviceAccountName, 'ferry-step-copy');
    const mounted = pod.volumes
      .filter((v: any) => v.secret)
      .map((v: any) => v.secret.secretName)
      .sort();
    // the DataUpload's location (default: s3, repo) and the destination's (site-b: s3-b, repo-b)
    assert.deepEqual(mounted, ['repo', 'repo-b', 's3', 's3-b']);
    assert.deepEqual(
      pod.containers[0].volumeMounts.filter((m: any) => m.mountPath.startsWith('/ferry/secrets/')).length,
      4,
    );
    const statusWrite = { ...dc, status: { phase: 'InProgress' as const } };
    assert.equal(await copyChanged({ before: dc, after: statusWrite }, w.dispatcher.context), undefined);
    assert.equal(jobsOf(w, dc).length, 1);
  });

  it('the sweep starts the next attempt only once nextAttemptTime passed, and never gives up', async () => {
    const { w, clock } = copyWorld();
    const dc = dataCopy({ phase: 'InProgress', attempts: 9, nextAttemptTime: '2026-03-01T12:30:00Z' });
    w.kube.seed(dc);
    w.kube.seed({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: copyJobName(dc.metadata.uid!, 9),
        namespace: ferryNamespace,
        creationTimestamp: '2026-03-01T11:00:00Z',
        labels: { [labels.uid]: dc.metadata.uid!, [labels.step]: 'copy', [labels.attempt]: '9' },
      },
      spec: {},
    });
    finishJob(w.kube, copyJobName(dc.metadata.uid!, 9), 'Failed', '2026-03-01T11:30:00Z');
    let report = await sweep(w.dispatcher);
    assert.deepEqual(jobsOf(w, dc), [copyJobName(dc.metadata.uid!, 9)], 'not before nextAttemptTime');
    assert.deepEqual(report.failed, []);
    clock.ms = Date.parse('2026-03-01T12:30:01Z');
    report = await sweep(w.dispatcher);
    assert.ok(
      report.dispatched.some((d) => d.includes('copy attempt 10')),
      report.dispatched.join('; '),
    );
    assert.deepEqual(jobsOf(w, dc), [copyJobName(dc.metadata.uid!, 10), copyJobName(dc.metadata.uid!, 9)]);
    // the failed attempt's Job, older than the orphan age, stays: its DataCopy exists
    assert.ok(!report.deleted.some((d) => d.includes(dc.metadata.uid!.replaceAll('-', '').slice(0, 16))));
    // a second sweep while attempt 10 runs starts nothing
    await sweep(w.dispatcher);
    assert.equal(jobsOf(w, dc).length, 2);
  });

  it('a finished copy gets nothing; its deletion runs the step while the finalizer holds it', async () => {
    const { w } = copyWorld();
    const done = dataCopy(
      { phase: 'Completed', attempts: 1, snapshotID: 'ab'.repeat(32) },
      { finalizers: ['ferry.dev/copy'] },
    );
    w.kube.seed(done);
    await sweep(w.dispatcher);
    assert.deepEqual(jobsOf(w, done), []);
    const deleting = { ...done, metadata: { ...done.metadata, deletionTimestamp: '2026-03-01T12:00:00Z' } };
    // a copy S3 Object Lock still retains: its step comes back when the retention ends, not before
    const retained = { ...deleting, status: { ...deleting.status!, nextAttemptTime: '2026-03-03T12:00:00Z' } };
    assert.equal((await copyChanged({ before: done, after: retained }, w.dispatcher.context))?.action, 'none');
    assert.deepEqual(jobsOf(w, done), []);
    assert.deepEqual(await copyChanged({ before: done, after: deleting }, w.dispatcher.context), {
      action: 'run',
      attempt: 2,
    });
    const released = { ...deleting, metadata: { ...deleting.metadata, finalizers: [] } };
    const other = { ...released, metadata: { ...released.metadata, uid: 'd0000000-0000-4000-8000-000000000000' } };
    assert.equal((await copyChanged({ before: done, after: other }, w.dispatcher.context))?.action, 'none');
  });

  it('a cancel runs the step when no attempt runs, even before the retry time', async () => {
    const { w } = copyWorld();
    const dc = dataCopy({ phase: 'InProgress', attempts: 1, nextAttemptTime: '2026-03-01T13:00:00Z' });
    w.kube.seed(dc);
    const canceled = { ...dc, spec: { ...dc.spec, cancel: true } };
    assert.deepEqual(await copyChanged({ before: dc, after: canceled }, w.dispatcher.context), {
      action: 'run',
      attempt: 2,
    });
    // while that attempt runs, another cancel-looking change starts nothing
    assert.equal((await copyChanged({ before: dc, after: canceled }, w.dispatcher.context))?.action, 'none');
  });

  it('under a cluster-wide transfer limit a copy waits for a slot, running transfers and copies counted, oldest first', async () => {
    const { w } = copyWorld({ cluster: 1, perNode: 0 });
    w.kube.seed({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: 'ferry-up-0123456789abcdef-transfer-1',
        namespace: ferryNamespace,
        creationTimestamp: '2026-03-01T11:59:00Z',
        labels: {
          [labels.uid]: 'f0000000-0000-4000-8000-000000000000',
          [labels.step]: 'transfer',
          [labels.attempt]: '1',
        },
      },
      spec: {},
    });
    const older = dataCopy(undefined, { creationTimestamp: '2026-03-01T11:00:00Z' });
    const newer = dataCopy(undefined, { creationTimestamp: '2026-03-01T11:30:00Z' });
    w.kube.seed(newer, older);
    assert.equal((await copyChanged({ after: newer }, w.dispatcher.context))?.action, 'none');
    let report = await sweep(w.dispatcher);
    assert.deepEqual([...jobsOf(w, older), ...jobsOf(w, newer)], []);
    assert.equal(report.waiting.filter((x) => x.includes('transfer slot')).length, 2);
    finishJob(w.kube, 'ferry-up-0123456789abcdef-transfer-1', 'Complete', '2026-03-01T11:00:00Z');
    report = await sweep(w.dispatcher);
    assert.deepEqual(jobsOf(w, older), [copyJobName(older.metadata.uid!, 1)]);
    assert.deepEqual(jobsOf(w, newer), [], 'the older copy took the one slot');
    // a cancel moves no data: it never waits for a slot
    const canceled = { ...newer, spec: { ...newer.spec, cancel: true } };
    assert.equal((await copyChanged({ before: newer, after: canceled }, w.dispatcher.context))?.action, 'run');
  });
});
