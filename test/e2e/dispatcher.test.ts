// The dispatcher on the cluster in a box, installed from deploy/: the CRDs are served as generated, invalid
// resources are refused by the apiserver (schema) or the webhook with the field named, valid ones get their step
// Job (found by labels), dry runs create nothing, status updates are checked, the steps' accounts are refused what
// they must not do, the sweep replaces a deleted Job, and with the webhook unreachable creation is refused clearly.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { fieldsOf } from '../../src/shared/api/fields.ts';
import { jobName, labels } from '../../src/shared/step-job/contract.ts';
import { validateFields } from '../../src/shared/api/schemas.ts';
import { arbitraryOf } from '../unit/api/arbitraries.ts';
import { KubeError, useCluster } from '../support/cluster.ts';
import type { TestCluster } from '../support/cluster.ts';
import { freePort } from '../cluster/ports.ts';
import { apiserverClientCertificate, ferryNamespace, installFerry, renderDeploy } from '../support/ferry-install.ts';
import type { FerryInstall } from '../support/ferry-install.ts';
import { createSlowSnapshotClass, deleteSlowSnapshotClass } from '../support/slow-snapshots.ts';
import { postReview } from '../support/webhook-call.ts';
import { boundClaim, dataUpload, summary, watchUntil, world } from './world.ts';

const run = promisify(execFile);
type Obj = Record<string, any>;

const api = '/apis/ferry.dev/v1alpha1';
const uploads = (ns: string): string => `${api}/namespaces/${ns}/datauploads`;
const downloads = (ns: string): string => `${api}/namespaces/${ns}/datadownloads`;
const jobsPath = `/apis/batch/v1/namespaces/${ferryNamespace}/jobs`;

let cluster: TestCluster;
let ferry: FerryInstall;
/** the client certificate the apiserver presents: the dispatcher serves no caller without it */
let apiserver: { cert: string; key: string };
let app: string;
let other: string;
let loc: string;
const suffix = randomBytes(3).toString('hex');

async function refusal(path: string, obj: Obj, method: 'POST' | 'PUT' = 'POST'): Promise<string> {
  try {
    await cluster.kube.request(method, path, obj);
  } catch (err) {
    if (err instanceof KubeError && err.status >= 400 && err.status < 500) return err.message;
    throw err;
  }
  assert.fail(`${method} ${path} was accepted: ${JSON.stringify(obj).slice(0, 300)}`);
}

function du(spec: Obj, name = `du-${randomBytes(3).toString('hex')}`): Obj {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name },
    spec: { sourcePVC: 'data', backupStorageLocation: loc, ...spec },
  };
}

function dd(spec: Obj, name = `dd-${randomBytes(3).toString('hex')}`): Obj {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataDownload',
    metadata: { name },
    spec: {
      targetPVC: { name: 'restored' },
      backupStorageLocation: loc,
      source: { snapshotID: 'abcdef0123456789' },
      ...spec,
    },
  };
}

/** POSTs an AdmissionReview to the installed dispatcher itself, as the apiserver would (with its client certificate). */
function review(request: Obj | undefined): Promise<{ status: number; body: string }> {
  return postReview(
    ferry,
    request ? { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request } : { hello: 'world' },
    apiserver,
  );
}

async function jobsOf(uid: string): Promise<Obj[]> {
  return (await cluster.kube.get(`${jobsPath}?labelSelector=${encodeURIComponent(`${labels.uid}=${uid}`)}`)).items;
}

async function kubectl(...args: string[]): Promise<string> {
  return (await run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args])).stdout;
}

before(async () => {
  cluster = await useCluster('dispatcher');
  ferry = await installFerry(cluster);
  apiserver = await apiserverClientCertificate();
  app = await cluster.namespace('app');
  other = await cluster.namespace('other');
  loc = `loc-${suffix}`;
  await cluster.kube.create(`${api}/namespaces/${ferryNamespace}/backupstoragelocations`, {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupStorageLocation',
    metadata: { name: loc },
    spec: {
      s3: { endpoint: cluster.s3.endpoint, bucket: cluster.s3.bucket, prefix: `e2e-${suffix}` },
      credential: { name: `s3-${suffix}` },
      repositoryPassword: { name: `repo-${suffix}`, key: 'password' },
      allowedNamespaces: [app],
      crossNamespaceRestores: [{ from: app, to: [other] }],
    },
  });
  await cluster.kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `repo-${suffix}` },
    stringData: { password: 'e2e' },
  });
  const claim = (name: string, storageClassName: string) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '16Mi' } } },
  });
  await cluster.kube.create(`/api/v1/namespaces/${app}/persistentvolumeclaims`, claim('data', 'ferry-local-immediate'));
  await cluster.kube.create(`/api/v1/namespaces/${app}/persistentvolumeclaims`, claim('pending', 'ferry-local'));
  await cluster.kube.waitFor(`/api/v1/namespaces/${app}/persistentvolumeclaims/data`, 'the data PVC to bind', (pvc) =>
    pvc.status?.phase === 'Bound' ? true : undefined,
  );
});

after(async () => {
  await cluster?.kube.delete(`${api}/namespaces/${ferryNamespace}/backupstoragelocations/${loc}`);
  await cluster?.kube.delete(`/api/v1/namespaces/${ferryNamespace}/secrets/repo-${suffix}`);
  await cluster?.cleanup();
});

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
    const health = await fetch(`http://127.0.0.1:${ferry.metricsPort}/healthz`);
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

describe('status updates', () => {
  it('are checked field by field, and a final phase stays final', async () => {
    // another data mover's resource: the steps and the dispatcher leave it alone, only its status is judged
    const created = await cluster.kube.create(uploads(app), du({ dataMover: 'elsewhere' }));
    const path = `${uploads(app)}/${created.metadata.name}/status`;
    assert.match(await refusal(path, { ...created, status: { phase: 'Done' } }, 'PUT'), /status\.phase/);
    assert.match(
      await refusal(
        path,
        { ...created, status: { phase: 'InProgress', progress: { bytesDone: -1, totalBytes: 1 } } },
        'PUT',
      ),
      /status\.progress\.bytesDone/,
    );
    const completed = await cluster.kube.request('PUT', path, { ...created, status: { phase: 'Completed' } });
    assert.match(
      await refusal(path, { ...completed, status: { phase: 'InProgress' } }, 'PUT'),
      /status\.phase: cannot change from Completed, which is final/,
    );
  });

  it('of the spec are refused except cancel', async () => {
    const created = await cluster.kube.create(uploads(app), du({ dataMover: 'elsewhere' }));
    const path = `${uploads(app)}/${created.metadata.name}`;
    assert.match(
      await refusal(path, { ...created, spec: { ...created.spec, sourcePVC: 'other' } }, 'PUT'),
      /spec\.sourcePVC: cannot change after creation/,
    );
    const canceled = await cluster.kube.request('PUT', path, { ...created, spec: { ...created.spec, cancel: true } });
    assert.match(
      await refusal(path, { ...canceled, spec: { ...canceled.spec, cancel: false } }, 'PUT'),
      /spec\.cancel: cannot be unset/,
    );
  });
});

describe('the step accounts', () => {
  async function asAccount(sa: string) {
    const res = await cluster.kube.create(`/api/v1/namespaces/${ferryNamespace}/serviceaccounts/${sa}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 600 },
    });
    return cluster.kube.withToken(res.status.token);
  }

  it('refuse every step the repository Secret: the transfer Job has it mounted', async () => {
    const secret = `/api/v1/namespaces/${ferryNamespace}/secrets/repo-${suffix}`;
    for (const sa of ['ferry-step-snapshot', 'ferry-dispatcher', 'ferry-step-transfer', 'ferry-step-delete']) {
      await assert.rejects(
        (await asAccount(sa)).get(secret),
        (err: unknown) => err instanceof KubeError && err.status === 403,
        sa,
      );
    }
  });
});

describe('the sweep', () => {
  it('replaces a step Job that was deleted', async () => {
    // a snapshot that never becomes ready keeps the resource in its first phase while the test works
    const slowClass = `slow-${suffix}`;
    await createSlowSnapshotClass(cluster.kube, slowClass);
    try {
      const created = await cluster.kube.create(
        uploads(app),
        du({ csiSnapshot: { snapshotClass: slowClass }, operationTimeout: '30m' }),
      );
      const uid = created.metadata.uid;
      const first = await cluster.kube.waitFor(
        `${jobsPath}/${jobName('DataUpload', uid, 'snapshot', 1)}`,
        'the first snapshot Job',
        (j) => j,
        15_000,
      );
      // (the option as a query parameter: the test client's DELETE with a body spoils its next request)
      await cluster.kube.delete(`${jobsPath}/${first.metadata.name}?propagationPolicy=Background`);
      await cluster.kube.waitFor(
        jobsPath,
        'the snapshot Job to go',
        (list) => (list.items.some((j: Obj) => j.metadata.labels?.[labels.uid] === uid) ? undefined : true),
        30_000,
      );
      const sweep = `sweep-${suffix}`;
      await kubectl('create', 'job', '-n', ferryNamespace, `--from=cronjob/ferry-sweep`, sweep);
      const done = await cluster.kube.waitFor(
        `${jobsPath}/${sweep}`,
        'the sweep to finish',
        (j) => (j.status?.succeeded || j.status?.failed ? j : undefined),
        120_000,
      );
      assert.equal(done.status.succeeded, 1, `the sweep failed: ${JSON.stringify(done.status)}`);
      const replaced = (await jobsOf(uid)).filter((j) => j.metadata.labels[labels.step] === 'snapshot');
      // (the scheduled sweep may have been first: either way a sweep replaced the Job)
      assert.equal(replaced.length, 1, 'the sweep did not start the snapshot step again');
      await cluster.kube.patch(`${uploads(app)}/${created.metadata.name}`, { spec: { cancel: true } });
    } finally {
      await deleteSlowSnapshotClass(cluster.kube, slowClass);
    }
  });
});

/**
 * ferry's webhook exactly as shipped, but calling a port nobody listens on and only for `namespace`, so suites
 * running beside this one keep their dispatcher. Returns how to take it away again.
 */
async function unreachableWebhook(namespace: string): Promise<() => Promise<void>> {
  const shipped = (await renderDeploy()).find((o) => o.kind === 'ValidatingWebhookConfiguration')!;
  const name = `ferry-unreachable-${namespace}`;
  const unreachable = structuredClone(shipped);
  unreachable.metadata = { name };
  for (const hook of unreachable.webhooks) {
    hook.clientConfig = {
      url: `https://127.0.0.1:${await freePort()}/validate`,
      caBundle: Buffer.from(ferry.ca).toString('base64'),
    };
    hook.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': namespace } };
  }
  await cluster.kube.create('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', unreachable);
  return async () => {
    await cluster.kube.delete(`/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${name}`);
  };
}

describe('with the dispatcher unreachable', () => {
  it('creation is refused with a message saying the webhook failed, and works again once it answers', async () => {
    const restore = await unreachableWebhook(app);
    const leftovers: string[] = [];
    try {
      // the apiserver answers 500 for a webhook it cannot call; the message says which. Until the new configuration
      // reaches the apiserver creations pass; the webhook may then take effect between a creation and its deletion,
      // which it refuses the same way (the object is removed once the webhook answers again)
      const deadline = Date.now() + 30_000;
      let error: unknown;
      while (!error && Date.now() < deadline) {
        const attempt = du({});
        error = await cluster.kube.create(uploads(app), attempt).then(
          async () => {
            const refused = await cluster.kube.delete(`${uploads(app)}/${attempt.metadata.name}`).then(
              () => undefined,
              (err: unknown) => err,
            );
            if (refused) leftovers.push(attempt.metadata.name);
            else await new Promise((r) => setTimeout(r, 500));
            return refused;
          },
          (err: unknown) => err,
        );
      }
      assert.ok(error instanceof KubeError, `creation was not refused: ${String(error)}`);
      assert.match(error.message, /failed calling webhook "dispatcher\.ferry\.dev"/);
    } finally {
      await restore();
    }
    const deadline = Date.now() + 30_000;
    for (;;) {
      const created = await cluster.kube.create(uploads(app), du({})).then(
        () => true,
        () => false,
      );
      if (created) break;
      assert.ok(Date.now() < deadline, 'creation still fails once the webhook answers');
      await new Promise((r) => setTimeout(r, 500));
    }
    for (const name of leftovers) await cluster.kube.delete(`${uploads(app)}/${name}`);
  });

  it(
    "a running step's status update retries until the dispatcher answers, and the resource then completes",
    { timeout: 20 * 60_000 },
    async (t) => {
      const w = await world('dispatcher-outage', ({ app: ns }) => ({ allowedNamespaces: [ns] }));
      try {
        const { path } = await boundClaim(w.cluster, w.app, 'data', '64Mi');
        for (let i = 0; i < 4; i++) await writeFile(join(path, `blob-${i}`), randomBytes(8 * 1024 * 1024));
        const created = await w.cluster.kube.create(uploads(w.app), dataUpload('outage', w.location));
        const resource = `${uploads(w.app)}/outage`;
        // the transfer Job exists from Prepared on: from here every status write of the transfer step needs the webhook
        const at = await w.cluster.kube.waitFor(
          resource,
          'the transfer to be dispatched',
          (o) =>
            ['Prepared', 'InProgress', 'Finalizing', 'Completed', 'Failed', 'Canceled'].includes(o.status?.phase)
              ? (o.status.phase as string)
              : undefined,
          10 * 60_000,
        );
        assert.ok(at === 'Prepared' || at === 'InProgress', `the DataUpload was ${at} before the outage began`);
        const transferPods = `/api/v1/namespaces/${ferryNamespace}/pods?labelSelector=${encodeURIComponent(`job-name=${jobName('DataUpload', created.metadata.uid, 'transfer', 1)}`)}`;
        const restore = await unreachableWebhook(w.app);
        const outageMs = 30_000;
        const phases = new Set<string>();
        const pods = new Set<string>();
        try {
          const until = Date.now() + outageMs;
          while (Date.now() < until) {
            phases.add((await w.cluster.kube.get(resource)).status?.phase);
            for (const pod of (await w.cluster.kube.get(transferPods)).items) pods.add(pod.metadata.name);
            await new Promise((r) => setTimeout(r, 500));
          }
        } finally {
          await restore();
        }
        assert.deepEqual(
          [...phases].filter((p) => !['Prepared', 'InProgress'].includes(p)),
          [],
          `the phase moved on while no status update could pass: ${[...phases].join(', ')}`,
        );
        const { final } = await watchUntil(w.cluster, resource, ['Completed', 'Failed', 'Canceled'], 10 * 60_000);
        assert.equal(final.status.phase, 'Completed', final.status.message);
        t.diagnostic(summary(final));
        // one transfer process waited out the outage and finished the step: it logged the retries and then its outcome
        assert.equal(pods.size, 1, `transfer pods during the outage: ${[...pods].join(', ')}`);
        const lines = (await w.cluster.podLogs(ferryNamespace, [...pods][0]!)).split('\n');
        const retried = lines.filter(
          (l) =>
            /could not (update the status of|patch) DataUpload; retrying/.test(l) &&
            l.includes('failed calling webhook'),
        );
        assert.ok(
          retried.length > 0,
          `the transfer logged no status update retried for the webhook:\n${lines.slice(-20).join('\n')}`,
        );
        assert.ok(
          lines.some((l) => l.includes('"outcome":"Advanced"')),
          'the transfer pod that retried did not finish its step',
        );
        t.diagnostic(`${retried.length} status writes retried during the ${outageMs / 1000} s outage`);
      } finally {
        await w.cluster.kube.delete(`${api}/namespaces/${ferryNamespace}/backupstoragelocations/${w.location}`);
        await w.cluster.cleanup();
      }
    },
  );
});
