// The dispatcher and its step Jobs on the cluster in a box: status updates are checked, the steps' accounts are
// refused what they must not do, and the sweep replaces a deleted Job.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jobName, labels } from '../../src/shared/step-job/contract.ts';
import { KubeError } from '../support/cluster.ts';
import { ferryNamespace } from '../support/ferry-install.ts';
import { createSlowSnapshotClass, deleteSlowSnapshotClass } from '../support/slow-snapshots.ts';
import {
  app,
  cluster,
  du,
  jobsOf,
  jobsPath,
  kubectl,
  refusal,
  suffix,
  uploads,
  useDispatcher,
} from './dispatcher-suite.ts';
import type { Obj } from './dispatcher-suite.ts';

useDispatcher();

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

describe("a location's missing Secret", () => {
  it('fails the transfer naming the Secret, instead of holding its transfer slot in ContainerCreating', async () => {
    // the suite's location names an S3 credentials Secret that was never created (s3-<suffix>)
    const created = await cluster.kube.create(uploads(app), du({}));
    const failed = await cluster.kube.waitFor(
      `${uploads(app)}/${created.metadata.name}`,
      'the DataUpload to fail',
      (r) => (r.status?.phase === 'Failed' ? r : undefined),
      240_000,
    );
    assert.equal(failed.status.steps.transfer.outcome, 'Failed');
    assert.match(failed.status.message, new RegExp(`credentials Secret "s3-${suffix}" does not exist in namespace`));
    // the step exits once it has written Failed, so its Job ends (or is already removed) and the slot is free
    await cluster.kube.waitFor(
      jobsPath,
      'the transfer Job of the failed DataUpload to end',
      (list) => {
        const transfer = list.items.filter(
          (j: Obj) =>
            j.metadata.labels?.[labels.uid] === created.metadata.uid && j.metadata.labels?.[labels.step] === 'transfer',
        );
        return transfer.every((j: Obj) => !j.status?.active) ? true : undefined;
      },
      60_000,
    );
  });
});
