// Issue 4, end-to-end item 11: every step runs under its own ServiceAccount, the backup succeeds with only the
// rights those accounts have, and each account is refused what its step does not need (the snapshot step reading
// the repository password, for one).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { labels } from '../../src/shared/step-job/contract.ts';
import { KubeError } from '../support/cluster.ts';
import { boundClaim, dataUpload, ferryNamespace, uploads, watchUntil, world } from './world.ts';
import type { Obj, World } from './world.ts';

const run = promisify(execFile);
let w: World & { app: string; other: string };

before(
  async () => {
    w = await world('accounts', ({ app }) => ({ allowedNamespaces: [app] }));
    const { path } = await boundClaim(w.cluster, w.app, 'data', '64Mi');
    await writeFile(join(path, 'file.txt'), 'data moved by least-privilege steps\n');
  },
  { timeout: 30 * 60_000 },
);
after(() => w?.cluster.cleanup());

const account = (step: string): string => `system:serviceaccount:${ferryNamespace}:ferry-step-${step}`;

async function canI(step: string, verb: string, resource: string, namespace?: string): Promise<boolean> {
  const args = [
    '--kubeconfig',
    w.cluster.kubeconfig,
    'auth',
    'can-i',
    verb,
    resource,
    `--as=${account(step)}`,
    ...(namespace ? ['-n', namespace] : []),
  ];
  try {
    await run('kubectl', args);
    return true;
  } catch (err) {
    if ((err as { code?: number }).code === 1) return false;
    throw err;
  }
}

describe('step accounts', { timeout: 20 * 60_000 }, () => {
  it('each step Job of a backup runs under its own ServiceAccount, and the backup completes with those rights', async () => {
    const created = await w.cluster.kube.create(uploads(w.app), dataUpload('least', w.location));
    // finalize deletes the transfer Job (its pod holds the exposed PVC), so the Jobs are looked at while they run
    const byStep = new Map<string, string>();
    let transferPod: Obj | undefined;
    const jobsPath = `/apis/batch/v1/namespaces/${ferryNamespace}/jobs?labelSelector=${encodeURIComponent(`${labels.uid}=${created.metadata.uid}`)}`;
    const look = async (): Promise<undefined> => {
      for (const j of (await w.cluster.kube.get(jobsPath)).items as Obj[]) {
        byStep.set(j.metadata.labels[labels.step], j.spec.template.spec.serviceAccountName);
        if (j.metadata.labels[labels.step] === 'transfer') transferPod = j.spec.template.spec;
      }
    };
    const { final } = await watchUntil(
      w.cluster,
      `${uploads(w.app)}/least`,
      ['Completed', 'Failed', 'Canceled'],
      10 * 60_000,
      look,
    );
    assert.equal(final.status.phase, 'Completed', final.status.message);
    await look();
    for (const step of ['snapshot', 'expose', 'transfer', 'finalize'])
      assert.equal(byStep.get(step), `ferry-step-${step}`, `the ${step} Job`);
    // a backup's transfer reads: the volume read-only, no capability that writes owners, modes or devices, and the
    // location's Secrets as volumes (its account reads none)
    const [step] = transferPod!.containers;
    assert.deepEqual(step.securityContext.capabilities.add, ['DAC_OVERRIDE']);
    assert.equal(transferPod!.volumes.find((v: Obj) => v.name === 'ferry-volume').persistentVolumeClaim.readOnly, true);
    const mounted = transferPod!.volumes
      .filter((v: Obj) => v.secret)
      .map((v: Obj) => v.secret.secretName)
      .sort();
    assert.deepEqual(mounted, [w.spec.credential.name, w.passwordSecret].sort());
  });

  it('a step account is refused what its step does not need', async () => {
    const table: [string, string, string, string | undefined, boolean][] = [
      ['snapshot', 'get', 'secrets', ferryNamespace, false],
      ['expose', 'get', 'secrets', ferryNamespace, false],
      ['finalize', 'get', 'secrets', ferryNamespace, false],
      ['transfer', 'get', 'secrets', ferryNamespace, false],
      ['delete', 'get', 'secrets', ferryNamespace, false],
      ['maintenance', 'get', 'secrets', ferryNamespace, false],
      ['snapshot', 'create', 'persistentvolumeclaims', ferryNamespace, false],
      ['transfer', 'create', 'volumesnapshots', w.app, false],
      ['transfer', 'delete', 'persistentvolumeclaims', ferryNamespace, false],
      ['delete', 'create', 'pods', ferryNamespace, false],
      ['snapshot', 'create', 'volumesnapshots', w.app, true],
      ['expose', 'create', 'volumesnapshotcontents', undefined, true],
    ];
    const wrong: string[] = [];
    for (const [step, verb, resource, ns, allowed] of table) {
      if ((await canI(step, verb, resource, ns)) !== allowed)
        wrong.push(`${step} ${allowed ? 'cannot' : 'can'} ${verb} ${resource}${ns ? ` in ${ns}` : ''}`);
    }
    assert.deepEqual(wrong, []);

    // and the apiserver says so to the account's own token
    const token = await w.cluster.kube.create(
      `/api/v1/namespaces/${ferryNamespace}/serviceaccounts/ferry-step-snapshot/token`,
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } },
    );
    const asSnapshot = w.cluster.kube.withToken(token.status.token);
    try {
      await asSnapshot.get(`/api/v1/namespaces/${ferryNamespace}/secrets/${w.passwordSecret}`);
      assert.fail('the snapshot step read the repository password Secret');
    } catch (err) {
      assert.ok(err instanceof KubeError && err.status === 403, String(err));
    } finally {
      asSnapshot.close();
    }
  });
});
