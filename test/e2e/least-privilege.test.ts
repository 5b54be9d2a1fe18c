// Issue 28, item 6: what each step's ServiceAccount may do, asked of the box's real apiserver with the account's own
// token, as a compromised step pod would. No step reads a Secret of ferry's namespace (a location's two are volumes
// of its Jobs); the schedule step can make only the CronJob, ServiceAccount and RoleBinding a schedule needs, with
// the run template's pod; the finalize step can change only the CSI volume of one of ferry's restores, and only
// its labels, claimRef and reclaim policy.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { BackupSchedule } from '../../src/shared/api/types.ts';
import type { KubeObject } from '../../src/shared/kube/kube.ts';
import { buildRunCronJob } from '../../src/steps/schedule/reconcile.ts';
import { KubeError } from '../support/cluster.ts';
import { busybox } from '../cluster/testing.ts';
import type { Kube } from '../support/cluster.ts';
import { ferryNamespace, world } from './world.ts';
import type { Obj, World } from './world.ts';

let w: World & { app: string; other: string };
const accounts = new Map<string, Kube>();

before(
  async () => {
    w = await world('privilege', ({ app }) => ({ allowedNamespaces: [app] }));
  },
  { timeout: 30 * 60_000 },
);
after(async () => {
  for (const kube of accounts.values()) kube.close();
  await w?.cluster.cleanup();
});

/** A client holding the account's own token, as its pod would. */
async function as(account: string): Promise<Kube> {
  let kube = accounts.get(account);
  if (!kube) {
    const token = await w.cluster.kube.create(`/api/v1/namespaces/${ferryNamespace}/serviceaccounts/${account}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 600 },
    });
    kube = w.cluster.kube.withToken(token.status.token);
    accounts.set(account, kube);
  }
  return kube;
}

/** Asserts the call is refused (403), by RBAC or by an admission policy whose message matches `why`. */
async function refused(call: Promise<unknown>, why?: RegExp): Promise<void> {
  await assert.rejects(call, (err: unknown) => {
    assert.ok(err instanceof KubeError, String(err));
    assert.equal(err.status, 403, err.message);
    if (why) assert.match(err.message, why);
    return true;
  });
}

/**
 * Admission policies installed a moment ago take a while to be enforced: tries the refused create until it is
 * refused (deleting what got through meanwhile), so the assertions after it see the policies in force.
 */
async function enforced(kube: Kube, path: string, obj: Obj, why: RegExp): Promise<void> {
  for (const deadline = Date.now() + 90_000; ;) {
    const err = await kube.create(path, obj).then(
      () => undefined,
      (e: unknown) => e,
    );
    if (err instanceof KubeError && why.test(err.message)) return;
    if (err === undefined) await w.cluster.kube.delete(`${path}/${obj.metadata.name}`);
    else if (!(err instanceof KubeError && err.status === 403)) throw err;
    if (Date.now() > deadline) assert.fail(`not refused within 90 s: ${String(err ?? 'created')}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

describe("Secrets of ferry's namespace", { timeout: 10 * 60_000 }, () => {
  it("are read by no step account, whatever the Secret (the location's, the webhook's key, any other)", async () => {
    await w.cluster.kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `stand-in-tls-${randomUUID().slice(0, 8)}` },
      type: 'kubernetes.io/tls',
      stringData: { 'tls.crt': 'c', 'tls.key': 'k' },
    });
    const secrets = ((await w.cluster.kube.get(`/api/v1/namespaces/${ferryNamespace}/secrets`)).items as Obj[]).map(
      (s) => s.metadata.name,
    );
    assert.ok(secrets.includes(w.passwordSecret) && secrets.includes(w.spec.credential.name));
    for (const account of [
      'ferry-step-transfer',
      'ferry-step-delete',
      'ferry-step-maintenance',
      'ferry-step-snapshot',
      'ferry-step-expose',
      'ferry-step-finalize',
      'ferry-step-schedule',
      'ferry-step-sync',
    ]) {
      const kube = await as(account);
      for (const name of secrets) await refused(kube.get(`/api/v1/namespaces/${ferryNamespace}/secrets/${name}`));
      await refused(kube.get(`/api/v1/namespaces/${ferryNamespace}/secrets`));
    }
  });
});

describe('the schedule step', { timeout: 10 * 60_000 }, () => {
  const schedule = (): BackupSchedule & KubeObject => ({
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: `nightly-${randomUUID().slice(0, 6)}`, namespace: w.app, uid: randomUUID(), generation: 1 },
    spec: { schedule: '0 2 * * *', backupStorageLocation: w.location, pvcs: ['data'], suspend: true },
  });
  const cronJobs = (ns: string): string => `/apis/batch/v1/namespaces/${ns}/cronjobs`;

  async function runCronJob(): Promise<Obj> {
    const template = await w.cluster.kube.get(`${cronJobs(ferryNamespace)}/ferry-schedule-run`);
    return buildRunCronJob(template as KubeObject, schedule(), ferryNamespace) as Obj;
  }

  it('creates the CronJob a schedule needs, and nothing that runs another pod or as another account', async () => {
    const kube = await as('ferry-step-schedule');
    const named = await runCronJob();
    named.metadata.name = 'backup-helper';
    await enforced(kube, cronJobs(w.app), named, /named ferry-schedule-\*/);
    const good = await runCronJob();
    await kube.create(cronJobs(w.app), good);

    const nodeOptions = await runCronJob();
    nodeOptions.spec.jobTemplate.spec.template.spec.containers[0].env.push({
      name: 'NODE_OPTIONS',
      value: '--import=data:text/javascript,process.exit(0)',
    });
    await refused(kube.create(cronJobs(w.app), nodeOptions), /environment/);

    const otherAccount = await runCronJob();
    otherAccount.spec.jobTemplate.spec.template.spec.serviceAccountName = 'default';
    await refused(kube.create(cronJobs(w.app), otherAccount), /must run its pods as its own ServiceAccount/);

    const otherImage = await runCronJob();
    Object.assign(otherImage.spec.jobTemplate.spec.template.spec.containers[0], {
      image: busybox,
      command: ['sh', '-c', 'cat /host/etc/shadow'],
    });
    await enforced(kube, cronJobs(w.app), otherImage, /run template/);

    const hostPath = await runCronJob();
    hostPath.spec.jobTemplate.spec.template.spec.volumes.push({ name: 'host', hostPath: { path: '/' } });
    await refused(kube.create(cronJobs(w.app), hostPath), /run template/);

    const inKubeSystem = await runCronJob();
    inKubeSystem.spec.jobTemplate.spec.template.spec.serviceAccountName = 'namespace-controller';
    inKubeSystem.metadata.namespace = 'kube-system';
    await refused(kube.create(cronJobs('kube-system'), inKubeSystem), /must run its pods as its own ServiceAccount/);

    const orphan = await runCronJob();
    delete orphan.metadata.ownerReferences;
    await refused(kube.create(cronJobs(w.app), orphan), /controlled by its BackupSchedule/);

    // the policies judge only ferry's account: anyone else's CronJob is none of their business
    const someones = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'report' },
      spec: {
        schedule: '0 0 1 1 *',
        suspend: true,
        jobTemplate: {
          spec: {
            template: {
              spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: busybox, command: ['true'] }] },
            },
          },
        },
      },
    };
    await w.cluster.kube.create(cronJobs(w.app), someones);

    // nor may it rewrite the templates in ferry's namespace, the run template included (two policies refuse this one,
    // and the apiserver answers with whichever it evaluated first)
    const template = await w.cluster.kube.get(`${cronJobs(ferryNamespace)}/ferry-schedule-run`);
    template.spec.jobTemplate.spec.template.spec.containers[0].image = busybox;
    await refused(
      kube.request('PUT', `${cronJobs(ferryNamespace)}/ferry-schedule-run`, template),
      /outside ferry-system|must be the run template/,
    );
  });

  it('makes only its own ServiceAccounts, bound only to ferry-schedule-run', async () => {
    const kube = await as('ferry-step-schedule');
    const s = schedule();
    const owner = [
      {
        apiVersion: 'ferry.dev/v1alpha1',
        kind: 'BackupSchedule',
        name: s.metadata.name,
        uid: s.metadata.uid,
        controller: true,
      },
    ];
    const name = `ferry-schedule-${s.metadata.name}`;
    const accountsPath = `/api/v1/namespaces/${w.app}/serviceaccounts`;
    const bindingsPath = `/apis/rbac.authorization.k8s.io/v1/namespaces/${w.app}/rolebindings`;
    await enforced(
      kube,
      accountsPath,
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'admin-bot', ownerReferences: owner } },
      /named ferry-schedule-\*/,
    );
    await kube.create(accountsPath, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, ownerReferences: owner },
    });
    await refused(
      kube.create('/api/v1/namespaces/kube-system/serviceaccounts', {
        apiVersion: 'v1',
        kind: 'ServiceAccount',
        metadata: { name: 'admin-bot', ownerReferences: owner },
      }),
    );
    const binding = (subject: string): Obj => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name, ownerReferences: owner },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'ferry-schedule-run' },
      subjects: [{ kind: 'ServiceAccount', name: subject, namespace: w.app }],
    });
    await refused(
      kube.create(bindingsPath, binding('default')),
      /may only bind ClusterRole ferry-schedule-run to the ServiceAccount/,
    );
    await kube.create(bindingsPath, binding(name));
  });
});

describe('the finalize step', { timeout: 10 * 60_000 }, () => {
  const pvs = '/api/v1/persistentvolumes';
  const made: string[] = [];
  after(async () => {
    for (const name of made) await w.cluster.kube.delete(`${pvs}/${name}`);
  });

  async function volume(source: Obj, extra: { labels?: Record<string, string>; claimRef?: Obj } = {}): Promise<string> {
    const name = `privilege-${randomUUID().slice(0, 8)}`;
    await w.cluster.kube.create(pvs, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: { name, labels: extra.labels },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'privilege-none',
        claimRef: extra.claimRef,
        ...source,
      },
    });
    made.push(name);
    return name;
  }
  /** waits until the policy refuses the finalize account a patch of someone else's volume */
  async function enforcedPatch(kube: Kube, path: string): Promise<void> {
    for (const deadline = Date.now() + 90_000; ;) {
      const err = await kube.patch(path, { metadata: { labels: { probe: 'x' } } }).then(
        () => undefined,
        (e: unknown) => e,
      );
      if (err instanceof KubeError && /only change volumes of ferry's restores/.test(err.message)) return;
      if (Date.now() > deadline) assert.fail(`not refused within 90 s: ${String(err ?? 'patched')}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  const csi = (): Obj => ({ csi: { driver: 'local.csi.ferry.dev', volumeHandle: randomUUID() } });
  const ours = { 'ferry.dev/uid': randomUUID() };

  it('cannot create a volume, hostPath or any other', async () => {
    const kube = await as('ferry-step-finalize');
    const someones = await volume(csi(), { claimRef: { namespace: w.app, name: 'database' } });
    await enforcedPatch(kube, `${pvs}/${someones}`);
    await refused(
      kube.create(pvs, {
        apiVersion: 'v1',
        kind: 'PersistentVolume',
        metadata: { name: `privilege-${randomUUID().slice(0, 8)}`, labels: ours },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          hostPath: { path: '/' },
          claimRef: { namespace: w.app, name: 'data' },
        },
      }),
    );
  });

  it("can hand one of ferry's restored CSI volumes to a claim, and change nothing else of it", async () => {
    const kube = await as('ferry-step-finalize');
    const restored = await volume(csi(), { claimRef: { namespace: ferryNamespace, name: 'ferry-down-x' } });
    await kube.patch(`${pvs}/${restored}`, {
      metadata: { labels: ours },
      spec: { persistentVolumeReclaimPolicy: 'Retain' },
    });
    await kube.patch(`${pvs}/${restored}`, {
      spec: {
        claimRef: {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          namespace: w.app,
          name: 'restored',
          uid: null,
          resourceVersion: null,
        },
      },
    });
    await refused(
      kube.patch(`${pvs}/${restored}`, { spec: { capacity: { storage: '100Gi' } } }),
      /may change only the labels, annotations, claimRef and reclaim policy/,
    );
    await refused(kube.patch(`${pvs}/${restored}`, { spec: { accessModes: ['ReadWriteMany'] } }), /may change only/);
  });

  it("cannot touch a volume that is not one of ferry's restores, nor a hostPath volume", async () => {
    const kube = await as('ferry-step-finalize');
    const someones = await volume(csi(), { claimRef: { namespace: w.app, name: 'database' } });
    await refused(
      kube.patch(`${pvs}/${someones}`, {
        spec: { claimRef: { namespace: w.other, name: 'stolen', uid: null, resourceVersion: null } },
      }),
      /only change volumes of ferry's restores/,
    );
    const host = await volume(
      { hostPath: { path: '/var/lib' } },
      { labels: ours, claimRef: { namespace: ferryNamespace, name: 'ferry-down-y' } },
    );
    await refused(
      kube.patch(`${pvs}/${host}`, {
        spec: { claimRef: { namespace: w.app, name: 'restored', uid: null, resourceVersion: null } },
      }),
      /not a CSI volume/,
    );
  });
});

describe('the maintenance reconcile step', { timeout: 10 * 60_000 }, () => {
  it("cannot make a maintenance CronJob whose pod is not the template's, such as one that reads a mounted Secret", async () => {
    const kube = await as('ferry-maintenance-reconcile');
    const cronJobs = `/apis/batch/v1/namespaces/${ferryNamespace}/cronjobs`;
    const template = await w.cluster.kube.get(`${cronJobs}/ferry-step-maintenance`);
    const probe = (): Obj => ({
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: `ferry-maint-probe-${randomUUID().slice(0, 6)}` },
      spec: { schedule: '0 0 1 1 *', suspend: true, jobTemplate: structuredClone(template.spec.jobTemplate) },
    });
    const reader = probe();
    const pod = reader.spec.jobTemplate.spec.template.spec;
    pod.volumes.push({ name: 'ferry-secret-0', secret: { secretName: w.passwordSecret } });
    Object.assign(pod.containers[0], {
      image: busybox,
      command: ['sh', '-c', `cat /ferry/secrets/${w.passwordSecret}/password`],
    });
    await enforced(kube, cronJobs, reader, /must be the maintenance template's/);
    const env = probe();
    env.spec.jobTemplate.spec.template.spec.containers[0].env.push({
      name: 'NODE_OPTIONS',
      value: '--import=data:text/javascript,1',
    });
    await refused(kube.create(cronJobs, env), /must be the maintenance template's/);
    // the template's own pod with a location's Secret mounted is what the reconcile makes: allowed
    const allowed = probe();
    allowed.spec.jobTemplate.spec.template.spec.containers[0].args = ['maintenance', w.location, 'check'];
    await kube.create(cronJobs, allowed);
    await w.cluster.kube.delete(`${cronJobs}/${allowed.metadata.name}`);
  });
});
