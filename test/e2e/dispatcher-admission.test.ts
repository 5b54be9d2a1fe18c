// The dispatcher's admission on the cluster in a box, installed from deploy/: the CRDs are served as generated,
// invalid resources are refused by the apiserver (schema) or the webhook with the field named, valid ones get their
// step Job (found by labels) and dry runs create nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { fieldsOf } from '../../src/shared/api/fields.ts';
import { jobName, labels } from '../../src/shared/step-job/contract.ts';
import { validateFields } from '../../src/shared/api/schemas.ts';
import { arbitraryOf } from '../unit/api/arbitraries.ts';
import {
  app,
  cluster,
  dd,
  downloads,
  du,
  ferry,
  jobsOf,
  jobsPath,
  kubectl,
  loc,
  other,
  refusal,
  review,
  suffix,
  uploads,
  useDispatcher,
} from './dispatcher-suite.ts';
import type { Obj } from './dispatcher-suite.ts';

useDispatcher();

describe('the CRDs', () => {
  it('are served with short names, printer columns and field documentation', async () => {
    const table = await kubectl('get', 'du,dd', '-n', app, '-o', 'wide');
    assert.doesNotMatch(table, /error/i);
    const explained = await kubectl('explain', 'dataupload.spec.sourcePVC');
    assert.match(explained, /Name of the PersistentVolumeClaim to back up/);
    const crd = await cluster.kube.get('/apis/apiextensions.k8s.io/v1/customresourcedefinitions/datauploads.ferry.dev');
    assert.deepEqual(
      crd.spec.versions[0].additionalPrinterColumns.map((c: Obj) => c.name),
      ['Phase', 'Progress%', 'Bytes Done', 'Total Bytes', 'Location', 'PVC', 'Node', 'Message', 'Age'],
    );
  });
});

describe('invalid resources', () => {
  const cases: [string, () => [string, Obj], () => string][] = [
    ['a source PVC name with capitals', () => [uploads(app), du({ sourcePVC: 'Data' })], () => 'spec.sourcePVC'],
    ['no source PVC', () => [uploads(app), du({ sourcePVC: undefined })], () => 'spec.sourcePVC'],
    ['a source PVC that is a number', () => [uploads(app), du({ sourcePVC: 5 })], () => 'spec.sourcePVC'],
    ['a source PVC too long', () => [uploads(app), du({ sourcePVC: 'a'.repeat(254) })], () => 'spec.sourcePVC'],
    ['no location', () => [uploads(app), du({ backupStorageLocation: undefined })], () => 'spec.backupStorageLocation'],
    [
      'a location with an underscore',
      () => [uploads(app), du({ backupStorageLocation: 'a_b' })],
      () => 'spec.backupStorageLocation',
    ],
    [
      'a location that does not exist',
      () => [uploads(app), du({ backupStorageLocation: 'nowhere' })],
      () => 'spec.backupStorageLocation: BackupStorageLocation "nowhere" does not exist',
    ],
    [
      'a namespace the location does not allow',
      () => [uploads(other), du({})],
      () => `spec.backupStorageLocation: BackupStorageLocation "${loc}" does not allow namespace ${other}`,
    ],
    [
      'a source PVC that does not exist',
      () => [uploads(app), du({ sourcePVC: 'gone' })],
      () => 'spec.sourcePVC: PersistentVolumeClaim "gone" does not exist',
    ],
    [
      'a source PVC that is not bound',
      () => [uploads(app), du({ sourcePVC: 'pending' })],
      () => 'spec.sourcePVC: PersistentVolumeClaim "pending" is Pending, not Bound',
    ],
    [
      'snapshotMoveData as a string',
      () => [uploads(app), du({ snapshotMoveData: 'yes' })],
      () => 'spec.snapshotMoveData',
    ],
    [
      'a timeout in words',
      () => [uploads(app), du({ operationTimeout: 'ten minutes' })],
      () => 'spec.operationTimeout',
    ],
    ['cancel as a number', () => [uploads(app), du({ cancel: 1 })], () => 'spec.cancel'],
    ['tags as a list', () => [uploads(app), du({ tags: ['a'] })], () => 'spec.tags'],
    ['a tag with a comma', () => [uploads(app), du({ tags: { team: 'a,b' } })], () => 'spec.tags.team'],
    [
      'too many tags',
      () => [uploads(app), du({ tags: Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`t${i}`, 'x'])) })],
      () => 'spec.tags',
    ],
    [
      'a snapshot name with a space',
      () => [uploads(app), du({ csiSnapshot: { volumeSnapshot: 'my snap' } })],
      () => 'spec.csiSnapshot.volumeSnapshot',
    ],
    ['csiSnapshot as a string', () => [uploads(app), du({ csiSnapshot: 'snap' })], () => 'spec.csiSnapshot'],
    // the apiserver's own limit: any name it takes works (test/e2e/long-names.test.ts)
    ['a name longer than Kubernetes allows', () => [uploads(app), du({}, 'n'.repeat(254))], () => 'metadata.name'],
    [
      'a restore with two sources',
      () => [downloads(other), dd({ source: { snapshotID: 'abcdef0123456789', dataUpload: { name: 'x' } } })],
      () => 'spec.source',
    ],
    ['a restore with no source', () => [downloads(other), dd({ source: {} })], () => 'spec.source'],
    ['a restore without a target', () => [downloads(other), dd({ targetPVC: undefined })], () => 'spec.targetPVC'],
    [
      'a target size in words',
      () => [downloads(other), dd({ targetPVC: { name: 'r', size: '10 GB' } })],
      () => 'spec.targetPVC.size',
    ],
    [
      'an unknown access mode',
      () => [downloads(other), dd({ targetPVC: { name: 'r', accessModes: ['RWO'] } })],
      () => 'spec.targetPVC.accessModes[0]',
    ],
    [
      'repeated access modes',
      () => [downloads(other), dd({ targetPVC: { name: 'r', accessModes: ['ReadWriteOnce', 'ReadWriteOnce'] } })],
      () => 'spec.targetPVC.accessModes',
    ],
    [
      'a short snapshot ID',
      () => [downloads(other), dd({ source: { snapshotID: 'abc' } })],
      () => 'spec.source.snapshotID',
    ],
    [
      'a restore into a namespace the location does not allow',
      () => [downloads(other), dd({})],
      () => `spec.backupStorageLocation: BackupStorageLocation "${loc}" does not allow namespace ${other}`,
    ],
    [
      'a cross-namespace restore the location does not allow',
      () => [downloads(app), dd({ sourceNamespace: other })],
      () =>
        `spec.sourceNamespace: BackupStorageLocation "${loc}" does not allow restores from namespace ${other} into namespace ${app}`,
    ],
    [
      'two different source namespaces',
      () => [downloads(other), dd({ source: { dataUpload: { name: 'x', namespace: app } }, sourceNamespace: 'third' })],
      () => 'spec.sourceNamespace: must equal spec.source.dataUpload.namespace',
    ],
    [
      'a DataUpload that does not exist',
      () => [downloads(other), dd({ source: { dataUpload: { name: 'ghost', namespace: app } } })],
      () => `spec.source.dataUpload: DataUpload "ghost" does not exist in namespace ${app}`,
    ],
    [
      'a target PVC that is already bound',
      () => [downloads(app), dd({ targetPVC: { name: 'data' } })],
      () => 'spec.targetPVC.name: PersistentVolumeClaim "data" is already bound',
    ],
  ];
  assert.ok(cases.length >= 30);
  for (const [name, make, expected] of cases) {
    it(`are refused, naming the field: ${name}`, async () => {
      const [path, obj] = make();
      const field = expected();
      const message = await refusal(path, JSON.parse(JSON.stringify(obj)));
      assert.ok(message.includes(field), `"${message}" does not name ${field}`);
    });
  }
});

describe('generated invalid resources', () => {
  // random specs shaped by the CRDs' own field descriptions (test/unit/api/arbitraries.ts), seeded and replayable
  const seed = Number(process.env.FERRY_PROPERTY_SEED || 4242);
  const numRuns = Number(process.env.FERRY_PROPERTY_RUNS || 100);
  const kinds = ['DataUpload', 'DataDownload'] as const;
  const generated = fc
    .constantFrom(...kinds)
    .chain((kind) => arbitraryOf(fieldsOf[kind].spec).map((spec) => ({ kind, spec })));
  const plural = (kind: (typeof kinds)[number]) => (kind === 'DataUpload' ? uploads : downloads);
  /** What the apiserver keeps of a value: it prunes unknown fields and drops nulls of fields that are not nullable. */
  const asStored = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(asStored);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k, v]) => v !== null && k !== 'unknownField')
        .map(([k, v]) => [k, asStored(v)]),
    );
  };
  const fieldNamed = /\bspec(\.|\[|:)|\bmetadata\./;

  it(`through the apiserver: every one refused naming a field, never a 500 (seed ${seed})`, async (t) => {
    let byWebhook = 0;
    await fc.assert(
      fc.asyncProperty(generated, fc.nat(), async ({ kind, spec }, n) => {
        const obj: Obj = { apiVersion: 'ferry.dev/v1alpha1', kind, metadata: { name: `gen-${n}` }, spec };
        // a spec the schema accepts once stored is made invalid by a location that does not exist, and ferry's to judge
        const stored = asStored(spec);
        if (
          stored &&
          typeof stored === 'object' &&
          !Array.isArray(stored) &&
          validateFields(kind, 'spec', stored).length === 0
        ) {
          obj.spec = { ...stored, backupStorageLocation: `missing-${suffix}`, dataMover: 'ferry' };
        }
        const message = await refusal(`${plural(kind)(app)}?dryRun=All`, obj);
        if (message.includes('admission webhook "dispatcher.ferry.dev" denied')) byWebhook++;
        assert.match(message, fieldNamed, `"${message}" names no field`);
      }),
      { seed, numRuns },
    );
    t.diagnostic(`${byWebhook} of ${numRuns} were refused by the webhook, the rest by the CRD schema`);
    assert.ok(byWebhook >= numRuns / 5, `only ${byWebhook} of ${numRuns} generated resources reached the webhook`);
  });

  it(`straight to the webhook: every one denied naming a field, and it stays healthy (seed ${seed})`, async () => {
    const invalidOnly = generated.filter(({ kind, spec }) => validateFields(kind, 'spec', spec).length > 0);
    await fc.assert(
      fc.asyncProperty(invalidOnly, fc.nat(), async ({ kind, spec }, n) => {
        const object = {
          apiVersion: 'ferry.dev/v1alpha1',
          kind,
          metadata: {
            name: `gen-${n}`,
            namespace: app,
            uid: `00000000-0000-0000-0000-${String(n).padStart(12, '0').slice(-12)}`,
          },
          spec,
        };
        const answer = await review({
          uid: `review-${n}`,
          kind: { group: 'ferry.dev', version: 'v1alpha1', kind },
          resource: { group: 'ferry.dev', version: 'v1alpha1', resource: `${kind.toLowerCase()}s` },
          name: object.metadata.name,
          namespace: app,
          operation: 'CREATE',
          object,
          dryRun: true,
          userInfo: { username: 'e2e' },
        });
        assert.equal(answer.status, 200, `the webhook answered ${answer.status}: ${answer.body}`);
        const response = JSON.parse(answer.body).response;
        assert.equal(response.allowed, false, `allowed ${JSON.stringify(spec)}`);
        const paths = validateFields(kind, 'spec', spec).map((i) => i.path);
        assert.ok(
          paths.some((p) => response.status.message.includes(p)),
          `"${response.status.message}" names none of ${paths.join(', ')}`,
        );
      }),
      { seed, numRuns },
    );
    assert.equal((await review(undefined)).status, 400, 'a body that is no review is refused as such');
    const health = await fetch(`${ferry.metricsUrl}/healthz`);
    assert.equal(health.status, 200, 'the dispatcher is healthy after the generated reviews');
  });
});

describe('a valid DataUpload', () => {
  it('gets its snapshot Job, named for its uid and found by its labels', async () => {
    const created = await cluster.kube.create(uploads(app), du({}));
    const uid = created.metadata.uid;
    const expected = jobName('DataUpload', uid, 'snapshot', 1);
    const job = await cluster.kube.waitFor(`${jobsPath}/${expected}`, 'the snapshot Job', (j) => j, 15_000);
    assert.equal(job.metadata.labels[labels.name], created.metadata.name);
    assert.equal(job.metadata.labels[labels.namespace], app);
    assert.deepEqual(job.spec.template.spec.containers[0].args, [
      'snapshot',
      `DataUpload/${app}/${created.metadata.name}`,
    ]);
    assert.equal(job.spec.template.spec.serviceAccountName, 'ferry-step-snapshot');
    assert.deepEqual((await jobsOf(uid)).map((j) => j.metadata.name).includes(expected), true);
  });

  it('is only checked in a dry run: nothing is created', async () => {
    const obj = du({});
    const answer = await cluster.kube.request('POST', `${uploads(app)}?dryRun=All`, obj);
    assert.ok(answer.metadata.uid);
    await new Promise((r) => setTimeout(r, 3000));
    assert.deepEqual(await jobsOf(answer.metadata.uid), []);
    assert.equal(await cluster.kube.find(`${uploads(app)}/${obj.metadata.name}`), undefined);
  });
});
