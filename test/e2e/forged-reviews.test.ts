// Issue 28, item 2, on the cluster in a box: AdmissionReviews sent straight to the dispatcher, as anyone who reaches
// its port could, change nothing in the cluster whatever they carry (a new phase with status.exposure naming another
// claim, cancel, a deletion of a finished DataUpload or of a BackupSchedule annotated ferry.dev/delete-backups, uids
// and namespaces of nothing stored). They are sent with the apiserver's own client certificate, so they reach the
// handler; without it, or with one another CA signed, the dispatcher refuses the connection, while the apiserver's
// calls (every suite's) still pass.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobName, labels } from '../../src/shared/step-job/contract.ts';
import {
  apiserverClientCertificate,
  ferryNamespace,
  installFerry,
  webhookClientName,
} from '../support/ferry-install.ts';
import type { FerryInstall } from '../support/ferry-install.ts';
import { createSlowSnapshotClass, deleteSlowSnapshotClass } from '../support/slow-snapshots.ts';
import { makeClientCertificate, makeTestCertificates } from '../support/test-ca.ts';
import { postReview } from '../support/webhook-call.ts';
import type { ClientCertificate } from '../support/webhook-call.ts';
import { api, boundClaim, claims, uploads, world } from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let ferry: FerryInstall;
let apiserver: { cert: string; key: string };
let upload: Obj;
let schedule: Obj;
const id = randomBytes(3).toString('hex');
const slowClass = `slow-${id}`;
const victim = `victim-${id}`;
const jobsPath = `/apis/batch/v1/namespaces/${ferryNamespace}/jobs`;
const schedules = (ns: string): string => `${api}/namespaces/${ns}/backupschedules`;
/** Long enough for a dispatcher that acts on reviews to have acted (it did so before answering). */
const settleMs = 4000;

function post(request: Obj, client: ClientCertificate): Promise<{ status: number; body: string }> {
  return postReview(ferry, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request }, client);
}

function forged(
  kind: string,
  operation: 'CREATE' | 'UPDATE' | 'DELETE',
  object: Obj | null,
  opts: { old?: Obj; subResource?: string; namespace?: string } = {},
): Obj {
  const meta = (object ?? opts.old)!.metadata;
  return {
    uid: randomUUID(),
    kind: { group: 'ferry.dev', version: 'v1alpha1', kind },
    resource: { group: 'ferry.dev', version: 'v1alpha1', resource: `${kind.toLowerCase()}s` },
    subResource: opts.subResource,
    name: meta.name,
    namespace: opts.namespace ?? meta.namespace,
    operation,
    object,
    oldObject: opts.old ?? null,
    dryRun: false,
    userInfo: { username: 'system:serviceaccount:app:mallory' },
  };
}

/** Sends the reviews as the apiserver would (its certificate), and waits as long as a dispatcher acting on them needs. */
async function send(reviews: Obj[]): Promise<void> {
  for (const r of reviews) {
    const answer = await post(r, apiserver);
    assert.equal(answer.status, 200, answer.body);
  }
  await new Promise((r) => setTimeout(r, settleMs));
}

async function jobsWithUid(uid: string): Promise<string[]> {
  const list = await w.cluster.kube.get(`${jobsPath}?labelSelector=${encodeURIComponent(`${labels.uid}=${uid}`)}`);
  return list.items.map((j: Obj) => `${j.metadata.labels[labels.step]}-${j.metadata.labels[labels.attempt]}`).sort();
}

before(
  async () => {
    w = await world('forged', ({ app }) => ({ allowedNamespaces: [app] }));
    ferry = await installFerry(w.cluster);
    apiserver = await apiserverClientCertificate();
    const { kube } = w.cluster;
    await boundClaim(w.cluster, w.app, 'data', '16Mi');
    // a claim in ferry's namespace that no transfer may mount
    await kube.create(claims(ferryNamespace), {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: victim },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'ferry-local-immediate',
        resources: { requests: { storage: '16Mi' } },
      },
    });
    // a snapshot that never becomes ready keeps the DataUpload in its first phase, its snapshot Job running
    await createSlowSnapshotClass(kube, slowClass);
    upload = await kube.create(uploads(w.app), {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'DataUpload',
      metadata: { name: `held-${id}` },
      spec: {
        sourcePVC: 'data',
        backupStorageLocation: w.location,
        csiSnapshot: { snapshotClass: slowClass },
        operationTimeout: '30m',
      },
    });
    schedule = await kube.create(schedules(w.app), {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name: `nightly-${id}` },
      spec: { schedule: '0 2 * * *', pvcs: ['data'], backupStorageLocation: w.location },
    });
  },
  { timeout: 10 * 60_000 },
);

after(async () => {
  const { kube } = w?.cluster ?? {};
  await kube?.patch(`${uploads(w.app)}/${upload?.metadata.name}`, { spec: { cancel: true } }).catch(() => undefined);
  if (kube) await deleteSlowSnapshotClass(kube, slowClass).catch(() => undefined);
  await kube?.delete(`${claims(ferryNamespace)}/${victim}`).catch(() => undefined);
  await kube?.delete(`${api}/namespaces/${ferryNamespace}/backupstoragelocations/${w.location}`).catch(() => undefined);
  await w?.cluster.cleanup();
});

describe("the apiserver's calls", () => {
  it('pass: a DataUpload created through the apiserver got its snapshot Job', async () => {
    const job = await w.cluster.kube.waitFor(
      `${jobsPath}/${jobName('DataUpload', upload.metadata.uid, 'snapshot', 1)}`,
      'the snapshot Job',
      (j) => j,
      30_000,
    );
    assert.equal(job.metadata.labels[labels.name], upload.metadata.name);
  });
});

describe('forged reviews change nothing in the cluster', () => {
  it("a DataUpload's status moved on (status.exposure naming another claim), canceled or deleted when finished: no Job, no status write", async () => {
    const stored = await w.cluster.kube.get(`${uploads(w.app)}/${upload.metadata.name}`);
    const phaseThen = stored.status?.phase;
    const exposure = { namespace: ferryNamespace, pvc: victim, volumeSnapshot: victim, volumeSnapshotContent: victim };
    const reviews: Obj[] = [];
    for (const phase of ['Accepted', 'Prepared', 'InProgress', 'Finalizing', 'Failing', 'Canceling']) {
      reviews.push(
        forged(
          'DataUpload',
          'UPDATE',
          { ...stored, status: { ...stored.status, phase, exposure } },
          { old: stored, subResource: 'status' },
        ),
      );
    }
    reviews.push(
      forged('DataUpload', 'UPDATE', { ...stored, spec: { ...stored.spec, cancel: true } }, { old: stored }),
    );
    const finished = {
      ...stored,
      metadata: { ...stored.metadata, finalizers: ['ferry.dev/delete-repository-data'] },
      status: { ...stored.status, phase: 'Completed', snapshotID: 'a'.repeat(64) },
    };
    reviews.push(forged('DataUpload', 'DELETE', null, { old: finished }));
    // the same, claiming the resource lives in another namespace
    reviews.push(
      forged(
        'DataUpload',
        'UPDATE',
        { ...stored, metadata: { ...stored.metadata, namespace: w.other }, status: { phase: 'Prepared', exposure } },
        { old: stored, subResource: 'status', namespace: w.other },
      ),
    );
    await send(reviews);
    assert.deepEqual(await jobsWithUid(upload.metadata.uid), ['snapshot-1']);
    const now = await w.cluster.kube.get(`${uploads(w.app)}/${upload.metadata.name}`);
    assert.equal(now.status?.phase, phaseThen, 'the phase was written');
    assert.notEqual(now.spec.cancel, true);
    assert.equal(now.status?.exposure, undefined, 'the exposure was written');
  });

  it('DataUploads and DataDownloads with uids nothing stored has: no Job, however many', async () => {
    const uids = Array.from({ length: 25 }, () => randomUUID());
    const reviews = uids.flatMap((uid, i) => {
      const up = {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'DataUpload',
        metadata: { name: `ghost-${i}`, namespace: w.app, uid },
        spec: { sourcePVC: 'data', backupStorageLocation: w.location },
      };
      const down = {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'DataDownload',
        metadata: { name: `ghost-${i}`, namespace: w.app, uid },
        spec: {
          targetPVC: { name: `restored-${i}` },
          backupStorageLocation: w.location,
          source: { snapshotID: 'abcdef0123456789' },
        },
      };
      return [
        forged('DataUpload', 'CREATE', up),
        forged('DataDownload', 'CREATE', down),
        forged(
          'DataDownload',
          'UPDATE',
          { ...down, status: { phase: 'Prepared', exposure: { namespace: ferryNamespace, pvc: victim } } },
          { old: { ...down, status: { phase: 'New' } }, subResource: 'status' },
        ),
      ];
    });
    await send(reviews);
    const all = await w.cluster.kube.get(`${jobsPath}?labelSelector=${encodeURIComponent(labels.uid)}`);
    const made = all.items
      .filter((j: Obj) => uids.includes(j.metadata.labels[labels.uid]))
      .map((j: Obj) => j.metadata.name);
    assert.deepEqual(made, []);
  });

  it('a BackupSchedule deletion carrying ferry.dev/delete-backups deletes no backup while the apiserver keeps the schedule', async () => {
    const { kube } = w.cluster;
    // a backup of the schedule (of another data mover, so nothing runs for it)
    const backup = await kube.create(uploads(w.app), {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'DataUpload',
      metadata: { name: `nightly-${id}-data-202501010200`, labels: { 'ferry.dev/schedule': schedule.metadata.name } },
      spec: { sourcePVC: 'data', backupStorageLocation: w.location, dataMover: 'elsewhere' },
    });
    const backupPath = `${uploads(w.app)}/${backup.metadata.name}`;
    const annotated = (s: Obj): Obj => ({
      ...s,
      metadata: { ...s.metadata, annotations: { ...s.metadata.annotations, 'ferry.dev/delete-backups': 'true' } },
    });
    const stored = await kube.get(`${schedules(w.app)}/${schedule.metadata.name}`);
    await send([forged('BackupSchedule', 'DELETE', null, { old: annotated(stored) })]);
    assert.ok(await kube.find(backupPath), 'a forged deletion of the schedule deleted its backup');
    // the annotation really stored, the deletion still only claimed
    const marked = await kube.patch(`${schedules(w.app)}/${schedule.metadata.name}`, {
      metadata: { annotations: { 'ferry.dev/delete-backups': 'true' } },
    });
    await send([
      forged('BackupSchedule', 'DELETE', null, { old: marked }),
      forged(
        'BackupSchedule',
        'UPDATE',
        { ...marked, metadata: { ...marked.metadata, deletionTimestamp: new Date().toISOString() } },
        { old: marked },
      ),
    ]);
    assert.ok(await kube.find(backupPath), 'a forged deletion of an annotated schedule deleted its backup');
    // and the real deletion, through the apiserver, takes the backup with it
    await kube.delete(`${schedules(w.app)}/${schedule.metadata.name}`);
    await kube.waitFor(
      uploads(w.app),
      'the backup of the deleted schedule to go',
      (list) => (list.items.some((d: Obj) => d.metadata.name === backup.metadata.name) ? undefined : true),
      60_000,
    );
  });
});

describe('callers of the webhook', () => {
  it("without the apiserver's client certificate are refused, with it are served", async () => {
    const probe = forged('DataUpload', 'CREATE', {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'DataUpload',
      metadata: { name: 'probe', namespace: w.app, uid: randomUUID() },
      spec: {},
    });
    await assert.rejects(post(probe, {}), 'a caller without a client certificate was served');
    const dir = await mkdtemp(join(tmpdir(), 'ferry-stranger-'));
    try {
      // the apiserver's name, signed by a CA the dispatcher does not trust
      await makeTestCertificates(dir);
      const pair = await makeClientCertificate(dir, dir, 'stranger', webhookClientName);
      await assert.rejects(
        post(probe, { cert: await readFile(pair.certFile, 'utf8'), key: await readFile(pair.keyFile, 'utf8') }),
        'a caller with a certificate of another CA was served',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const answer = await post({ ...probe, dryRun: true }, apiserver);
    assert.equal(answer.status, 200);
    assert.match(JSON.parse(answer.body).response.status.message, /spec\.sourcePVC/);
  });
});
