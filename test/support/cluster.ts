// The cluster in a box for e2e suites (see test/cluster/README.md).
//
//   const cluster = await useCluster('dataupload');
//   after(() => cluster.cleanup());
//   const ns = await cluster.namespace();            // a fresh namespace, deleted by cleanup()
//   await cluster.kube.create(`/api/v1/namespaces/${ns}/pods`, pod);
//
// The first suite of a test run that needs the box starts it (building on a fresh machine); the others reuse it.
// A box this run started stops when the run ends; a box started by `npm run cluster -- up` is reused and left running.
// `kubeconfig` is a file with embedded credentials: kubectl and @kubernetes/client-node (`kc.loadFromFile(path)`)
// read it as is.

import { randomBytes } from 'node:crypto';
import { adminAccess, readRecord, up } from '../cluster/box.ts';
import type { BoxRecord, S3Settings } from '../cluster/box.ts';
import { accessFromPki, Kube, KubeError } from '../cluster/kube.ts';
import type { KubeAccess } from '../cluster/kube.ts';
import { statePaths } from '../cluster/paths.ts';
import type { StatePaths } from '../cluster/paths.ts';
import { secondSitePaths, upSecondSite } from '../cluster/second-site.ts';
import type { SecondSite } from '../cluster/second-site.ts';
import { podLogs } from '../cluster/pod-logs.ts';
import type { LogQuery } from '../cluster/pod-logs.ts';

export type { KubeAccess, LogQuery, S3Settings };
export { Kube, KubeError };

export interface TestCluster {
  /** admin kubeconfig (system:masters) */
  kubeconfig: string;
  server: string;
  access: KubeAccess;
  /** an admin client; see test/cluster/kube.ts */
  kube: Kube;
  nodes: string[];
  /** MinIO on 127.0.0.1 with a bucket for tests */
  s3: S3Settings;
  /** Velero as the box runs it: the CLI binary and its namespace */
  velero: BoxRecord['velero'];
  /** Creates a namespace `<suite>-<prefix>-<random>` labelled with the suite; cleanup() deletes it. */
  namespace(prefix?: string): Promise<string>;
  /** What a pod's container printed, also after the pod is gone. */
  podLogs(namespace: string, pod: string, query?: LogQuery): Promise<string>;
  /** Deletes the suite's namespaces (without waiting for their contents to go) and closes the client. */
  cleanup(): Promise<void>;
}

export const suiteLabel = 'ferrybox.ferry.dev/suite';

/** The test runner's pid when running under `node --test` (each file is its child), else this process. */
function runOwner(): number {
  return process.env.NODE_TEST_CONTEXT ? process.ppid : process.pid;
}

export async function useCluster(suite: string): Promise<TestCluster> {
  const { record } = await up({ owner: runOwner() });
  const access = adminAccess(record);
  const kube = new Kube(access);
  const namespaces: string[] = [];
  const dnsName = (s: string): string =>
    s
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '');
  return {
    kubeconfig: record.kubeconfig,
    server: record.server,
    access,
    kube,
    nodes: record.nodes,
    s3: record.s3,
    velero: record.velero,
    async namespace(prefix = '') {
      const name = dnsName([suite, prefix, randomBytes(3).toString('hex')].filter(Boolean).join('-')).slice(0, 63);
      await kube.create('/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { [suiteLabel]: dnsName(suite).slice(0, 63) } },
      });
      namespaces.push(name);
      // pods are admitted only once the namespace's ServiceAccount exists
      await kube.waitFor(
        `/api/v1/namespaces/${name}/serviceaccounts/default`,
        `the default ServiceAccount of ${name}`,
        () => true,
      );
      return name;
    },
    podLogs(namespace, pod, query) {
      return podLogs(statePaths().nodes, namespace, pod, query);
    },
    async cleanup() {
      for (const ns of namespaces.splice(0)) await kube.delete(`/api/v1/namespaces/${ns}`);
      kube.close();
    },
  };
}

export interface SecondSiteCluster {
  kubeconfig: string;
  /** what installFerry needs to install on this site */
  site: { paths: StatePaths; secondSite: true };
  server: string;
  access: KubeAccess;
  kube: Kube;
  nodes: string[];
  /** the second site's MinIO: its own keys, `bucket` and `lockedBucket` (S3 Object Lock) */
  s3: SecondSite['s3'];
  /** What a pod of the second site's node printed, also after the pod is gone. */
  podLogs(namespace: string, pod: string, query?: LogQuery): Promise<string>;
  /** the first site's MinIO, etcd and apiserver frozen (SIGSTOP) while fn runs: the first site is gone for fn */
  withFirstSiteGone<T>(fn: () => Promise<T>): Promise<T>;
  close(): void;
}

/** The box's second cluster (test/cluster/second-site.ts), started next to the first on demand. */
export async function useSecondSite(): Promise<SecondSiteCluster> {
  await up({ owner: runOwner() });
  const site = await upSecondSite();
  const access = accessFromPki(site.server, site.pki);
  const kube = new Kube(access);
  return {
    kubeconfig: site.kubeconfig,
    site: { paths: secondSitePaths(), secondSite: true },
    server: site.server,
    access,
    kube,
    nodes: site.nodes,
    s3: site.s3,
    podLogs: (namespace, pod, query) => podLogs(secondSitePaths().nodes, namespace, pod, query),
    withFirstSiteGone: (fn) => withFirstSiteFrozen(fn),
    close: () => kube.close(),
  };
}

// what a user of the first site loses with it: its API and its object storage
const firstSiteServices = ['etcd', 'kube-apiserver', 'minio'];

async function withFirstSiteFrozen<T>(fn: () => Promise<T>): Promise<T> {
  const record = await readRecord();
  const frozen = (record?.daemons ?? []).filter((d) => firstSiteServices.includes(d.name));
  if (frozen.length !== firstSiteServices.length) throw new Error('the box records no first site to stop');
  const served = await withKube(record!, servedServices);
  for (const d of frozen) process.kill(d.pid, 'SIGSTOP');
  try {
    return await fn();
  } finally {
    for (const d of frozen) process.kill(d.pid, 'SIGCONT');
    const resumed = Date.now();
    await withKube(record!, (kube) => firstSiteReady(kube, served, resumed));
  }
}

async function withKube<T>(record: BoxRecord, fn: (kube: Kube) => Promise<T>): Promise<T> {
  const kube = new Kube(adminAccess(record));
  try {
    return await fn(kube);
  } finally {
    kube.close();
  }
}

/** Services (`namespace/name`) with at least one ready endpoint. */
async function servedServices(kube: Kube): Promise<Set<string>> {
  const slices = (await kube.get('/apis/discovery.k8s.io/v1/endpointslices')).items as {
    metadata: { namespace: string; labels?: Record<string, string> };
    endpoints?: { conditions?: { ready?: boolean } }[];
  }[];
  const served = new Set<string>();
  for (const slice of slices) {
    const service = slice.metadata.labels?.['kubernetes.io/service-name'];
    if (service && slice.endpoints?.some((e) => e.conditions?.ready !== false))
      served.add(`${slice.metadata.namespace}/${service}`);
  }
  return served;
}

/**
 * Back from a stop the apiserver answers within seconds, but the node lifecycle controller may then find the nodes'
 * leases older than its grace period before the kubelets renew them: it marks the nodes and every pod on them not
 * ready, which takes the pods out of their Services (ferry's webhook refuses connections) until the kubelets report
 * again. The suite goes on once the leases were renewed after the stop, the controller has looked at them (two of
 * its 5 s periods), and every Service served before the stop is served again.
 */
async function firstSiteReady(kube: Kube, before: Set<string>, resumed: number): Promise<void> {
  const deadline = Date.now() + 300_000;
  const waitFor = async (what: () => string, check: () => Promise<boolean>): Promise<void> => {
    while (!(await check().catch(() => false))) {
      if (Date.now() > deadline) throw new Error(`5 minutes after the first site resumed, ${what()}`);
      await new Promise((r) => setTimeout(r, 1000));
    }
  };
  let stale: string[] = [];
  await waitFor(
    () => `these nodes renewed no lease: ${stale.join(', ')}`,
    async () => {
      const leases = (await kube.get('/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases')).items as {
        metadata: { name: string };
        spec: { renewTime?: string };
      }[];
      stale = leases.filter((l) => !(Date.parse(l.spec.renewTime ?? '') > resumed)).map((l) => l.metadata.name);
      return leases.length > 0 && stale.length === 0;
    },
  );
  await new Promise((r) => setTimeout(r, 10_000));
  let missing: string[] = [];
  await waitFor(
    () => `these are not served: ${missing.join(', ')}`,
    async () => {
      const nodes = (await kube.get('/api/v1/nodes')).items as {
        metadata: { name: string };
        status: { conditions?: { type: string; status: string }[] };
      }[];
      const notReady = nodes.filter(
        (n) => !n.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
      );
      const now = await servedServices(kube);
      missing = [...notReady.map((n) => `node ${n.metadata.name}`), ...[...before].filter((s) => !now.has(s))];
      return missing.length === 0;
    },
  );
}
