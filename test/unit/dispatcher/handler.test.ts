// The admission handler: invalid resources are denied with a message naming the field and what is allowed, valid
// ones are allowed and dispatched (except dry runs and other data movers), and no input makes it throw.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import { handleReview } from '../../../src/dispatcher/handler.ts';
import { fieldsOf } from '../../../src/shared/api/fields.ts';
import { arbitraryOf } from '../api/arbitraries.ts';
import { claim, download, ferryNamespace, jobs, location, review, upload, world } from './world.ts';

type Case = [name: string, body: () => AdmissionReview, expected: string];

const du = (spec: Record<string, unknown>, name = 'nightly', namespace = 'app') => {
  const r = upload(name);
  return {
    ...r,
    metadata: { ...r.metadata, namespace },
    spec: { sourcePVC: 'data', backupStorageLocation: 'default', ...spec },
  };
};
const duWithout = (field: string) => {
  const r = du({});
  delete (r.spec as Record<string, unknown>)[field];
  return r;
};
const dd = (spec: Record<string, unknown>, namespace = 'other') => {
  const r = download('restore');
  return { ...r, metadata: { ...r.metadata, namespace }, spec: { ...r.spec, ...spec } };
};
const create = (obj: unknown) => () => review('CREATE', obj);
const updateSpec = (old: { spec: object }, spec: Record<string, unknown>) => () =>
  review('UPDATE', { ...old, spec: { ...old.spec, ...spec } }, { old });
const updateStatus = (old: object, status: Record<string, unknown>) => () =>
  review('UPDATE', { ...old, status }, { old, subResource: 'status' });

const completed = upload('finished', 'Completed');

const invalidCases: Case[] = [
  ['no spec', create({ ...du({}), spec: undefined }), 'spec: is required'],
  ['a spec that is not an object', create({ ...du({}), spec: 'data' }), 'spec: must be an object'],
  ['no source PVC', create(duWithout('sourcePVC')), 'spec.sourcePVC: is required'],
  [
    'a source PVC name with capitals',
    create(du({ sourcePVC: 'Data' })),
    'spec.sourcePVC: must be a DNS-1123 subdomain',
  ],
  [
    'a source PVC name too long',
    create(du({ sourcePVC: 'a'.repeat(254) })),
    'spec.sourcePVC: must be at most 253 characters',
  ],
  ['a source PVC name that is a number', create(du({ sourcePVC: 7 })), 'spec.sourcePVC: must be a string'],
  ['no location', create(duWithout('backupStorageLocation')), 'spec.backupStorageLocation: is required'],
  [
    'a location name with an underscore',
    create(du({ backupStorageLocation: 'my_loc' })),
    'spec.backupStorageLocation: must be a DNS-1123 subdomain',
  ],
  [
    'a location that does not exist',
    create(du({ backupStorageLocation: 'nope' })),
    'spec.backupStorageLocation: BackupStorageLocation "nope" does not exist',
  ],
  [
    'a location that does not allow the namespace',
    create(du({}, 'nightly', 'stranger')),
    'spec.backupStorageLocation: BackupStorageLocation "default" does not allow namespace stranger',
  ],
  [
    'a source PVC that does not exist',
    create(du({ sourcePVC: 'gone' })),
    'spec.sourcePVC: PersistentVolumeClaim "gone" does not exist',
  ],
  [
    'a source PVC that is not bound',
    create(du({ sourcePVC: 'pending' })),
    'spec.sourcePVC: PersistentVolumeClaim "pending" is Pending, not Bound',
  ],
  [
    'snapshotMoveData as a string',
    create(du({ snapshotMoveData: 'yes' })),
    'spec.snapshotMoveData: must be true or false',
  ],
  [
    'a timeout in words',
    create(du({ operationTimeout: '10 minutes' })),
    "spec.operationTimeout: must be a duration such as '30s'",
  ],
  ['a timeout as a number', create(du({ operationTimeout: 600 })), 'spec.operationTimeout: must be a string'],
  ['cancel as a number', create(du({ cancel: 1 })), 'spec.cancel: must be true or false'],
  ['tags as a list', create(du({ tags: ['a'] })), 'spec.tags: must be an object'],
  ['a tag with a comma', create(du({ tags: { team: 'a,b' } })), 'spec.tags.team: must be text without commas'],
  [
    'too many tags',
    create(du({ tags: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`t${i}`, 'x'])) })),
    'spec.tags: must have at most 32 entries',
  ],
  [
    'a snapshot name with a space',
    create(du({ csiSnapshot: { volumeSnapshot: 'my snap' } })),
    'spec.csiSnapshot.volumeSnapshot: must be a DNS-1123 subdomain',
  ],
  ['csiSnapshot as a string', create(du({ csiSnapshot: 'snap' })), 'spec.csiSnapshot: must be an object'],
  ['a changed source PVC', updateSpec(du({}), { sourcePVC: 'other' }), 'spec.sourcePVC: cannot change after creation'],
  [
    'a changed location',
    updateSpec(du({}), { backupStorageLocation: 'elsewhere' }),
    'spec.backupStorageLocation: cannot change after creation',
  ],
  ['an unset cancel', updateSpec(du({ cancel: true }), { cancel: false }), 'spec.cancel: cannot be unset once set'],
  [
    'a phase that does not exist',
    updateStatus(upload('x', 'InProgress'), { phase: 'Done' }),
    'status.phase: must be one of New, Accepted',
  ],
  [
    'negative progress',
    updateStatus(upload('x', 'InProgress'), { phase: 'InProgress', progress: { bytesDone: -1, totalBytes: 5 } }),
    'status.progress.bytesDone: must be at least 0',
  ],
  [
    'a percentage above 100',
    updateStatus(upload('x', 'InProgress'), {
      phase: 'InProgress',
      progress: { bytesDone: 1, totalBytes: 1, percent: 101 },
    }),
    'status.progress.percent: must be at most 100',
  ],
  [
    'a phase leaving Completed',
    updateStatus(completed, { phase: 'InProgress' }),
    'status.phase: cannot change from Completed, which is final',
  ],
  [
    'two conditions of one type',
    updateStatus(upload('x', 'Prepared'), {
      phase: 'Prepared',
      conditions: [1, 2].map(() => ({
        type: 'Queued',
        status: 'True',
        reason: 'ConcurrencyLimit',
        message: '',
        lastTransitionTime: '2025-01-01T00:00:00Z',
      })),
    }),
    'status.conditions: must not repeat an item',
  ],
  [
    'a start time in words',
    updateStatus(upload('x', 'Accepted'), { phase: 'Accepted', startTimestamp: 'yesterday' }),
    'status.startTimestamp: must be an RFC 3339 timestamp',
  ],
  [
    'a snapshot ID that is not hexadecimal',
    updateStatus(upload('x', 'Finalizing'), { phase: 'Finalizing', snapshotID: 'z'.repeat(64) }),
    'status.snapshotID: must be a 64-digit lowercase hexadecimal ID',
  ],
  [
    'a restore with two sources',
    create(dd({ source: { snapshotID: 'abcdef0123456789', dataUpload: { name: 'nightly' } } })),
    'spec.source: must set exactly one of snapshotID, dataUpload',
  ],
  [
    'a restore with no source',
    create(dd({ source: {} })),
    'spec.source: must set exactly one of snapshotID, dataUpload',
  ],
  [
    'a restore without a target',
    create(JSON.parse(JSON.stringify(dd({ targetPVC: undefined })))),
    'spec.targetPVC: is required',
  ],
  [
    'a target size in words',
    create(dd({ targetPVC: { name: 'restored', size: '10 GB' } })),
    "spec.targetPVC.size: must be a storage quantity such as '10Gi'",
  ],
  [
    'an unknown access mode',
    create(dd({ targetPVC: { name: 'restored', accessModes: ['RWO'] } })),
    'spec.targetPVC.accessModes[0]: must be one of ReadWriteOnce',
  ],
  [
    'a short snapshot ID',
    create(dd({ source: { snapshotID: 'abc' } })),
    'spec.source.snapshotID: must be a repository snapshot ID',
  ],
  [
    'a cross-namespace restore the location does not allow',
    create(dd({ sourceNamespace: 'other' }, 'app')),
    'spec.sourceNamespace: BackupStorageLocation "default" does not allow restores from namespace other into namespace app',
  ],
  [
    'two different source namespaces',
    create(dd({ source: { dataUpload: { name: 'nightly', namespace: 'app' } }, sourceNamespace: 'third' })),
    'spec.sourceNamespace: must equal spec.source.dataUpload.namespace',
  ],
  [
    'a DataUpload that does not exist',
    create(dd({ source: { dataUpload: { name: 'ghost' } } })),
    'spec.source.dataUpload: DataUpload "ghost" does not exist in namespace app',
  ],
  [
    'a DataUpload that has not completed',
    create(dd({ source: { dataUpload: { name: 'running' } } })),
    'spec.source.dataUpload: DataUpload "app/running" is InProgress, not Completed',
  ],
  [
    'a DataUpload kept in another location',
    create(dd({ backupStorageLocation: 'second', source: { dataUpload: { name: 'finished' } } })),
    'spec.backupStorageLocation: must be "default", where DataUpload "finished" stored its data',
  ],
  [
    'a target PVC that is already bound',
    create(dd({ sourceNamespace: undefined, targetPVC: { name: 'data' } }, 'app')),
    'spec.targetPVC.name: PersistentVolumeClaim "data" is already bound',
  ],
];

function seeded() {
  const w = world();
  w.kube.seed(
    location('second', ['*']),
    { ...upload('running', 'InProgress') },
    { ...completed, metadata: { ...completed.metadata, name: 'finished' } },
  );
  return w;
}

describe('the admission handler denies', () => {
  assert.ok(invalidCases.length >= 30);
  for (const [name, body, expected] of invalidCases) {
    it(`${name}: "${expected}..."`, async () => {
      const w = seeded();
      const result = await handleReview(body(), w.handler);
      assert.equal(result.status, 200);
      const response = (result as { review: AdmissionReview }).review.response!;
      assert.equal(response.allowed, false, `allowed, expected a denial naming ${expected}`);
      assert.ok(
        response.status?.message.includes(expected),
        `"${response.status?.message}" does not say "${expected}"`,
      );
      assert.equal(jobs(w.kube).length, 0, 'a denied request dispatched a Job');
    });
  }
});

describe('the admission handler allows', () => {
  it('a valid DataUpload and creates its snapshot Job', async () => {
    const w = seeded();
    const obj = du({});
    const result = await handleReview(review('CREATE', obj), w.handler);
    assert.equal((result as { review: AdmissionReview }).review.response?.allowed, true);
    assert.equal(jobs(w.kube).length, 0, 'nothing starts before the apiserver stores the DataUpload');
    w.kube.seed(obj);
    await w.settle();
    assert.deepEqual(
      jobs(w.kube).map((j) => j.metadata.labels?.['ferry.dev/step']),
      ['snapshot'],
    );
    assert.equal(w.metrics.dispatches.get({ kind: 'DataUpload', step: 'snapshot', result: 'created' }), 1);
  });

  it('a DataUpload with a 253-character name in a 63-character namespace, whose Job is named and labelled within the limits', async () => {
    const w = seeded();
    const namespace = `ns${'x'.repeat(60)}1`;
    const name = `${'a'.repeat(100)}.${'b'.repeat(151)}9`;
    w.kube.seed(claim(namespace, 'data'));
    const obj = du({ backupStorageLocation: 'second' }, name, namespace);
    const result = await handleReview(review('CREATE', obj), w.handler);
    assert.equal((result as { review: AdmissionReview }).review.response?.allowed, true, JSON.stringify(result));
    w.kube.seed(obj);
    await w.settle();
    const [job] = jobs(w.kube);
    assert.ok(job, 'a snapshot Job');
    assert.match(job.metadata.name, /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);
    for (const [key, value] of Object.entries(job.metadata.labels ?? {}))
      assert.match(value, /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/, key);
    assert.equal(job.metadata.labels?.['ferry.dev/namespace'], namespace);
    assert.equal(job.metadata.annotations?.['ferry.dev/resource'], `DataUpload/${namespace}/${name}`);
  });

  it('a dry run without creating anything', async () => {
    const w = seeded();
    const result = await handleReview(review('CREATE', du({}), { dryRun: true }), w.handler);
    assert.equal((result as { review: AdmissionReview }).review.response?.allowed, true);
    assert.equal(jobs(w.kube).length, 0);
    assert.deepEqual(
      w.kube.actions.filter((a) => a.verb !== 'get'),
      [],
    );
  });

  it('a valid cross-namespace restore and creates its expose Job', async () => {
    const w = seeded();
    w.kube.seed(claim('other', 'restored', 'Pending'));
    const obj = dd({ source: { dataUpload: { name: 'finished', namespace: 'app' } }, sourceNamespace: undefined });
    const result = await handleReview(review('CREATE', obj), w.handler);
    assert.equal((result as { review: AdmissionReview }).review.response?.allowed, true, JSON.stringify(result));
    w.kube.seed(obj);
    await w.settle();
    assert.deepEqual(
      jobs(w.kube).map((j) => j.metadata.labels?.['ferry.dev/step']),
      ['expose'],
    );
  });

  it('a resource of another data mover, without checking or dispatching it', async () => {
    const w = seeded();
    const result = await handleReview(review('CREATE', du({ dataMover: 'velero', sourcePVC: 'gone' })), w.handler);
    assert.equal((result as { review: AdmissionReview }).review.response?.allowed, true);
    assert.equal(jobs(w.kube).length, 0);
  });

  it('progress updates and the removal of a finalizer', async () => {
    const w = seeded();
    const running = upload('x', 'InProgress');
    const progress = await handleReview(
      review(
        'UPDATE',
        { ...running, status: { phase: 'InProgress', progress: { bytesDone: 5, totalBytes: 10, percent: 50 } } },
        { old: running, subResource: 'status' },
      ),
      w.handler,
    );
    assert.equal((progress as { review: AdmissionReview }).review.response?.allowed, true);
    const deleting = {
      ...completed,
      metadata: {
        ...completed.metadata,
        deletionTimestamp: '2025-01-02T00:00:00Z',
        finalizers: ['ferry.dev/delete-repository-data'],
      },
    };
    const unfinalized = await handleReview(
      review('UPDATE', { ...deleting, metadata: { ...deleting.metadata, finalizers: [] } }, { old: deleting }),
      w.handler,
    );
    assert.equal((unfinalized as { review: AdmissionReview }).review.response?.allowed, true);
  });

  it('deletions, always', async () => {
    const w = seeded();
    const result = await handleReview(review('DELETE', null, { old: { ...du({}), spec: 'broken' } }), w.handler);
    assert.equal((result as { review: AdmissionReview }).review.response?.allowed, true);
  });
});

describe('the admission handler on any input', () => {
  it('answers 400 for what is not an AdmissionReview', async () => {
    const w = world();
    for (const body of [
      null,
      3,
      'x',
      {},
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' },
      { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { uid: '' } },
    ]) {
      assert.equal((await handleReview(body, w.handler)).status, 400, JSON.stringify(body));
    }
  });

  it('never throws, and answers every review with its uid and, when denying, the field at fault', async () => {
    const w = seeded();
    const objects = fc.oneof(
      fc.record({ spec: arbitraryOf(fieldsOf.DataUpload.spec) }).map((x) => ({ ...du({}), spec: x.spec })),
      fc.record({ spec: arbitraryOf(fieldsOf.DataDownload.spec) }).map((x) => ({ ...dd({}), spec: x.spec })),
      fc
        .record({ status: arbitraryOf(fieldsOf.DataUpload.status) })
        .map((x) => ({ ...upload('s', 'InProgress'), status: x.status })),
      fc.jsonValue(),
    );
    await fc.assert(
      fc.asyncProperty(
        objects,
        fc.constantFrom('CREATE', 'UPDATE', 'DELETE') as fc.Arbitrary<'CREATE' | 'UPDATE' | 'DELETE'>,
        fc.boolean(),
        async (obj, op, status) => {
          const old =
            typeof obj === 'object' && obj !== null && 'kind' in obj ? { ...obj, status: { phase: 'Prepared' } } : obj;
          const body = review(op, obj, { old, subResource: status ? 'status' : undefined, dryRun: true });
          const result = await handleReview(body, w.handler);
          assert.equal(result.status, 200);
          const response = (result as { review: AdmissionReview }).review.response!;
          assert.equal(response.uid, body.request!.uid);
          if (!response.allowed)
            assert.match(
              response.status!.message,
              /^(spec|status|metadata|oldObject)(\.\w+|\[\d+\]|\["(?:[^"\\]|\\.)*"\])*: |^the (DataUpload|DataDownload) is not a JSON object$/,
            );
        },
      ),
      { numRuns: 300 },
    );
  });
});

void ferryNamespace;
