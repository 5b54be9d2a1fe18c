// Names at their limits on the cluster in a box: a DataUpload and a DataDownload named with 253 characters (the
// most Kubernetes allows) in a namespace of 63 back up and restore identical data; their step Jobs are found by
// `kubectl get jobs -l ferry.dev/name=...` (the name fitted into a label value) and by `ferry backup|restore logs`;
// a BackupSchedule named with 253 characters, backing up a PVC with a long name, makes working backups whose names
// pass 63 characters.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { labelValue } from '../../src/shared/kube/names.ts';
import { scheduleSelector } from '../../src/shared/schedule/names.ts';
import { labels, resourceNameLabel } from '../../src/shared/step-job/contract.ts';
import { compareTrees } from '../support/compare-tree.ts';
import { ferry } from '../support/ferry-cli.ts';
import { randomBytes } from '../support/repo.ts';
import {
  api,
  boundClaim,
  claims,
  dataDownload,
  dataUpload,
  downloads,
  ferryNamespace,
  summary,
  uploads,
  volumePath,
  watchUntil,
  world,
} from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
let ns: string;
let source: { pv: string; path: string };
const minute = 60_000;
const phaseTimeoutMs = 10 * minute;
/** 253 characters, with dots (a DNS-1123 subdomain); two such names share their first 200 */
const longName = (tail: string): string =>
  `${'backup.of-the-volume-with-a-long-name.'.repeat(5)}${'x'.repeat(253 - 190 - tail.length)}${tail}`;
/** Jobs stay in ferry's namespace after a run's namespaces go: names of their own per run */
const id = randomUUID().slice(0, 6);
const uploadName = longName(`u${id}`);
const downloadName = longName(`d${id}`);
const schedulePVC = `data-${'p'.repeat(120)}`;

before(
  async () => {
    w = await world('names', () => ({ allowedNamespaces: ['*'] }));
    // <suite>-<prefix>-<6 hex digits>: 63 characters
    ns = await w.cluster.namespace('n'.repeat(63 - 'names'.length - 8));
    assert.equal(ns.length, 63);
    source = await boundClaim(w.cluster, ns, 'data', '64Mi');
    await mkdir(join(source.path, 'dir'));
    await writeFile(join(source.path, 'dir', 'a.bin'), randomBytes(3 * 1024 * 1024, 29));
    await writeFile(join(source.path, 'b.txt'), 'names at their limits\n');
    const other = await boundClaim(w.cluster, ns, schedulePVC, '16Mi');
    await writeFile(join(other.path, 'c.bin'), randomBytes(256 * 1024, 30));
  },
  { timeout: 30 * minute },
);
after(() => w?.cluster.cleanup());

async function ferryOK(args: string[]): Promise<string> {
  const r = await ferry(args, { password: null, env: { KUBECONFIG: w.cluster.kubeconfig } });
  assert.equal(r.code, 0, `ferry ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** The steps of the Jobs `kubectl get jobs -n ferry-system -l ferry.dev/name=<label>` lists, checked to be the resource's. */
async function jobStepsByName(name: string, uid: string): Promise<string[]> {
  const selector = `${labels.name}=${resourceNameLabel(name)}`;
  const list = await w.cluster.kube.get(
    `/apis/batch/v1/namespaces/${ferryNamespace}/jobs?labelSelector=${encodeURIComponent(selector)}`,
  );
  for (const job of list.items)
    assert.equal(job.metadata.labels[labels.uid], uid, `${job.metadata.name} found by ${selector}`);
  return list.items.map((j: Obj) => j.metadata.labels[labels.step]).sort();
}

describe('a 253-character name in a 63-character namespace', { timeout: 40 * minute }, () => {
  it('backs up: the DataUpload completes, its Jobs are found by the name label and by ferry backup logs', async (t) => {
    assert.equal(uploadName.length, 253);
    await w.cluster.kube.create(uploads(ns), dataUpload(uploadName, w.location));
    const { final } = await watchUntil(
      w.cluster,
      `${uploads(ns)}/${uploadName}`,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    t.diagnostic(summary(final));
    assert.match(final.status.snapshotID, /^[0-9a-f]{64}$/);
    // transfer's Job is removed when the resource ends (its pod holds the exposed volume)
    assert.deepEqual(await jobStepsByName(uploadName, final.metadata.uid), ['expose', 'finalize', 'snapshot']);
    const logs = await ferryOK(['backup', 'logs', uploadName, '-n', ns]);
    for (const step of ['snapshot', 'expose', 'finalize'])
      assert.match(logs, new RegExp(`^==> ${step} attempt 1: Job ferry-up-`, 'm'));
    assert.match(await ferryOK(['backup', 'describe', uploadName, '-n', ns]), /Completed/);
  });

  it('restores: the DataDownload completes with identical data, its Jobs are found the same ways', async (t) => {
    assert.equal(downloadName.length, 253);
    assert.equal(uploadName.slice(0, 200), downloadName.slice(0, 200));
    await w.cluster.kube.create(
      downloads(ns),
      dataDownload(downloadName, w.location, {
        targetPVC: { name: 'restored' },
        source: { dataUpload: { name: uploadName, namespace: ns } },
      }),
    );
    const { final } = await watchUntil(
      w.cluster,
      `${downloads(ns)}/${downloadName}`,
      ['Completed', 'Failed', 'Canceled'],
      phaseTimeoutMs,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    t.diagnostic(summary(final));
    const pvc = await w.cluster.kube.get(`${claims(ns)}/restored`);
    assert.deepEqual(await compareTrees(source.path, await volumePath(w.cluster, pvc.spec.volumeName)), []);
    // the two names share their first 200 characters, and their labels still tell them apart
    assert.notEqual(resourceNameLabel(downloadName), resourceNameLabel(uploadName));
    assert.deepEqual(await jobStepsByName(downloadName, final.metadata.uid), ['expose', 'finalize']);
    assert.match(
      await ferryOK(['restore', 'logs', downloadName, '-n', ns, '--step', 'expose']),
      /^==> expose attempt 1: Job ferry-down-/m,
    );
  });
});

describe('a BackupSchedule named with 253 characters', { timeout: 40 * minute }, () => {
  it('makes working backups of a long-named PVC, found by the schedule label', async (t) => {
    const name = longName(`s${id}`);
    const path = `${api}/namespaces/${ns}/backupschedules`;
    await w.cluster.kube.create(path, {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name },
      spec: { schedule: '* * * * *', pvcs: [schedulePVC], backupStorageLocation: w.location },
    });
    const selector = scheduleSelector(name);
    const deadline = Date.now() + 12 * minute;
    let done: Obj | undefined;
    while (!done) {
      const list = await w.cluster.kube.get(`${uploads(ns)}?labelSelector=${encodeURIComponent(selector)}`);
      done = list.items.find((du: Obj) => ['Completed', 'Failed', 'Canceled'].includes(du.status?.phase));
      if (!done && Date.now() > deadline)
        throw new Error(
          `no run of the schedule ended within 12 minutes; its DataUploads: ${JSON.stringify(list.items.map((d: Obj) => [d.metadata.name, d.status?.phase]))}`,
        );
      if (!done) await new Promise((r) => setTimeout(r, 3000));
    }
    await w.cluster.kube.delete(`${path}/${name}`);
    assert.equal(done.status.phase, 'Completed', done.status.message);
    t.diagnostic(summary(done));
    assert.ok(done.metadata.name.length > 63 && done.metadata.name.length <= 253, done.metadata.name);
    assert.equal(done.spec.sourcePVC, schedulePVC);
    assert.equal(done.metadata.labels['ferry.dev/schedule'], labelValue(name));
    assert.deepEqual(await jobStepsByName(done.metadata.name, done.metadata.uid), ['expose', 'finalize', 'snapshot']);
  });
});
