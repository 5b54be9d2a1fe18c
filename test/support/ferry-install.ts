// Installs ferry from deploy/ into the cluster in a box as `kubectl apply -k deploy/` does on any cluster: ferry's
// image on the box's real nodes, the dispatcher behind its Service, the webhook calling it through that Service. What
// an operator supplies, the installer supplies: the serving certificate (from a throwaway CA, for the Service's
// names) with the webhook's caBundle, and, as an operator whose apiserver presents a webhook client certificate
// would, that certificate's CA (ConfigMap ferry-webhook-client-ca) with the check turned on (FERRY_CLIENT_CA,
// FERRY_CLIENT_NAMES): only the box's apiserver, or a test holding its certificate (apiserverClientCertificate), is
// served. One replica instead of two, so that a test reading /metrics through the Service reads the dispatcher that
// did the work.
//
//   const cluster = await useCluster('my-suite');
//   const ferry = await installFerry(cluster);
//
// Suites share one install, also across test runs of several people on one box (a lock keeps two from installing
// at once). It is redone only when the code and manifests the dispatcher runs have changed, as a rolling update, so
// the webhook answers throughout.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { applyAll } from '../../src/shared/install/apply.ts';
import { renderInstall } from '../../src/shared/install/install.ts';
import { HttpKube } from '../../src/shared/kube/client.ts';
import type { KubeObject as ApplyObject } from '../../src/shared/kube/kube.ts';
import { withLock } from '../cluster/lock.ts';
import { checkoutDir, statePaths } from '../cluster/paths.ts';
import type { StatePaths } from '../cluster/paths.ts';
import type { KubeObject } from '../cluster/kube.ts';
import { makeTestCertificates } from './test-ca.ts';
import type { TestCluster } from './cluster.ts';

const run = promisify(execFile);

export const ferryNamespace = 'ferry-system';

/**
 * All the installer needs of the box: its admin kubeconfig (a TestCluster or the box's record, as `npm run demo` has).
 * The second site (useSecondSite) also gives its state folder, runs no Velero, and has no kube-proxy: its dispatcher
 * is reached at its pod's address.
 */
export type BoxAccess = Pick<TestCluster, 'kubeconfig'> & { site?: { paths: StatePaths; secondSite: true } };

const sitePaths = (cluster: BoxAccess): StatePaths => cluster.site?.paths ?? statePaths();

export interface FerryInstall {
  /** the webhook's URL through the dispatcher's Service (its ClusterIP), as the apiserver calls it */
  webhookUrl: string;
  /** /metrics, /readyz and /healthz through the Service */
  metricsUrl: string;
  /** the name the serving certificate is for: give it as the TLS server name when calling webhookUrl */
  serverName: string;
  /** PEM of the CA that signed the dispatcher's certificate */
  ca: string;
  /** the dispatcher's Deployment in ferry-system */
  deployment: string;
  /** hash of what the dispatcher runs: its sources and the manifests */
  version: string;
}

/** What the installed dispatcher and manifests are made of; a change means installing again. */
const versioned = [
  'deploy',
  'jobs',
  'policies',
  'src/shared/install',
  'src/dispatcher',
  'src/entry/dispatcher.ts',
  'src/shared/api',
  'src/shared/kube',
];

const installLabel = 'ferrybox.ferry.dev/install';
const dispatcherName = 'ferry-dispatcher';
const serviceNames = [dispatcherName, `${dispatcherName}.${ferryNamespace}`, `${dispatcherName}.${ferryNamespace}.svc`];

async function* files(path: string): AsyncGenerator<string> {
  const entries = await readdir(path, { withFileTypes: true }).catch(() => undefined);
  if (!entries) {
    yield path;
    return;
  }
  for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) yield* files(join(path, e.name));
}

async function currentVersion(): Promise<string> {
  const hash = createHash('sha256');
  for (const top of versioned) {
    for await (const file of files(join(checkoutDir, top)))
      hash.update(file).update(await readFile(file).catch(() => Buffer.alloc(0)));
  }
  return hash.digest('hex').slice(0, 10);
}

async function kubectl(cluster: BoxAccess, args: string[], input?: string): Promise<string> {
  const child = run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 });
  if (input !== undefined) child.child.stdin?.end(input);
  return (await child).stdout;
}

/** deploy/ rendered as `ferry install` renders it (as kustomize would), as objects. */
export async function renderDeploy(velero = true): Promise<KubeObject[]> {
  // the box runs Velero, and ferry is installed as its data mover, as a Velero user would
  return renderInstall({ dir: join(checkoutDir, 'deploy'), veleroNamespace: velero ? 'velero' : undefined });
}

/** The box's apiserver presents this pair to webhooks (test/cluster/internal/pki/box.go). */
const webhookClientDir = (paths = statePaths()): string => join(paths.pki, 'webhook-client');
export const webhookClientName = 'kube-apiserver-webhook-client';

/** The client certificate and key the box's apiserver presents to webhooks, as PEM: to call the dispatcher as it does. */
export async function apiserverClientCertificate(): Promise<{ cert: string; key: string }> {
  const [cert, key] = await Promise.all(
    ['client.crt', 'client.key'].map((f) => readFile(join(webhookClientDir(), f), 'utf8')),
  );
  return { cert, key };
}

/** deploy/'s objects with what the box supplies (certificate, caBundle, client CA, one replica, the version), and
 * apart from them the webhooks, applied once the dispatcher answers. */
function installObjects(
  rendered: KubeObject[],
  version: string,
  tls: { cert: string; key: string; ca: string },
  clientCA: string,
): { objects: KubeObject[]; webhooks: KubeObject[] } {
  const objects = structuredClone(rendered);
  const deployment = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === dispatcherName);
  const webhooks = objects.filter((o) => o.kind === 'ValidatingWebhookConfiguration');
  if (!deployment || webhooks.length === 0)
    throw new Error(`deploy/ renders no Deployment ${dispatcherName} or no webhook.`);
  deployment.spec.replicas = 1;
  // the image keeps its tag when the checkout changes: a new version in the template rolls the pods onto it
  deployment.spec.template.metadata.annotations = {
    ...deployment.spec.template.metadata.annotations,
    [installLabel]: version,
  };
  const container = deployment.spec.template.spec.containers[0];
  const mount = container.volumeMounts.find((m: KubeObject) => m.name === 'client-ca').mountPath;
  container.env = [
    ...container.env,
    { name: 'FERRY_CLIENT_CA', value: `${mount}/ca.crt` },
    { name: 'FERRY_CLIENT_NAMES', value: webhookClientName },
  ];
  for (const config of webhooks)
    for (const hook of config.webhooks) hook.clientConfig.caBundle = Buffer.from(tls.ca).toString('base64');
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: `${dispatcherName}-tls`, namespace: ferryNamespace },
    stringData: { 'tls.crt': tls.cert, 'tls.key': tls.key },
  };
  const clientCAMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'ferry-webhook-client-ca', namespace: ferryNamespace },
    data: { 'ca.crt': clientCA },
  };
  return { objects: [...objects.filter((o) => !webhooks.includes(o)), secret, clientCAMap], webhooks };
}

/** Server-side apply through the API, as `ferry install` does (CRDs wait until Established). */
async function apply(cluster: BoxAccess, items: KubeObject[]): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const kube = new HttpKube(kc);
  try {
    await applyAll(kube, items as ApplyObject[]);
  } finally {
    kube.close();
  }
}

async function getJson(cluster: BoxAccess, args: string[]): Promise<KubeObject | undefined> {
  const text = await kubectl(cluster, ['get', '-n', ferryNamespace, '--ignore-not-found', '-o', 'json', ...args]);
  return text.trim() ? (JSON.parse(text) as KubeObject) : undefined;
}

/** Whether the dispatcher of `version` alone serves: rolled out, available, and no older pod left. */
async function rolledOut(cluster: BoxAccess, version: string): Promise<boolean> {
  const d = await getJson(cluster, ['deployment', dispatcherName]);
  if (!d || d.spec.template.metadata.annotations?.[installLabel] !== version) return false;
  const s = d.status ?? {};
  return (
    s.observedGeneration >= d.metadata.generation &&
    s.updatedReplicas === d.spec.replicas &&
    s.replicas === d.spec.replicas &&
    s.availableReplicas === d.spec.replicas
  );
}

/** Why the dispatcher is not available: its pods' states and the namespace's recent warnings. */
async function whyNotRolledOut(cluster: BoxAccess): Promise<string> {
  const pods = (await getJson(cluster, ['pods', '-l', 'app.kubernetes.io/component=dispatcher']))?.items ?? [];
  const states = pods.map(
    (p: KubeObject) =>
      `${p.metadata.name} ${p.status.phase} ${JSON.stringify(p.status.containerStatuses?.[0]?.state ?? p.status.conditions ?? {})}`,
  );
  const events = ((await getJson(cluster, ['events']))?.items ?? [])
    .filter((e: KubeObject) => e.type === 'Warning')
    .slice(-5)
    .map((e: KubeObject) => `${e.involvedObject.name}: ${e.reason} ${e.message}`);
  return [...states, ...events].join('; ') || 'no dispatcher pod';
}

async function install(cluster: BoxAccess, version: string): Promise<FerryInstall> {
  // one CA per box: a dispatcher still serving the previous install's certificate is trusted by the new caBundle
  const dir = join(sitePaths(cluster).root, 'ferry-install');
  await mkdir(dir, { recursive: true });
  const certFile = join(dir, 'tls.crt');
  const haveCertificate = await access(certFile).then(
    () => true,
    () => false,
  );
  if (!haveCertificate) await makeTestCertificates(dir, 'tls.crt', 'tls.key', serviceNames);
  const [cert, key, ca, clientCA] = await Promise.all(
    [certFile, join(dir, 'tls.key'), join(dir, 'ca.crt'), join(webhookClientDir(sitePaths(cluster)), 'ca.crt')].map(
      (f) => readFile(f, 'utf8'),
    ),
  );
  const { objects, webhooks } = installObjects(await renderDeploy(!cluster.site), version, { cert, key, ca }, clientCA);
  await apply(cluster, objects);
  const deadline = Date.now() + 5 * 60_000;
  while (!(await rolledOut(cluster, version))) {
    if (Date.now() > deadline)
      throw new Error(
        `The dispatcher ${version} did not become available in 5 minutes: ${await whyNotRolledOut(cluster)}`,
      );
    await new Promise((r) => setTimeout(r, 1000));
  }
  await apply(cluster, webhooks);
  const ip = await serviceAddress(cluster);
  return {
    webhookUrl: `https://${ip}:443/validate`,
    metricsUrl: `http://${ip}:8080`,
    serverName: serviceNames[2],
    ca,
    deployment: dispatcherName,
    version,
  };
}

/** The dispatcher's Service address; on the second site, which routes no Service, its ready pod's. */
async function serviceAddress(cluster: BoxAccess): Promise<string> {
  if (cluster.site) {
    const endpoints = await getJson(cluster, ['endpoints', dispatcherName]);
    const ip = endpoints?.subsets?.[0]?.addresses?.[0]?.ip;
    if (!ip) throw new Error(`Service ${ferryNamespace}/${dispatcherName} has no ready endpoint.`);
    return ip;
  }
  const service = await getJson(cluster, ['service', dispatcherName]);
  const ip = service?.spec?.clusterIP;
  if (!ip) throw new Error(`Service ${ferryNamespace}/${dispatcherName} has no ClusterIP.`);
  return ip;
}

/** Whether the dispatcher answers /readyz through its Service. */
async function answersReady(metricsUrl: string): Promise<boolean> {
  try {
    return (await fetch(`${metricsUrl}/readyz`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

export async function installFerry(cluster: BoxAccess): Promise<FerryInstall> {
  const root = sitePaths(cluster).root;
  const recordFile = join(root, 'ferry-install.json');
  return withLock(join(root, 'ferry-install.lock'), 10 * 60_000, async () => {
    const previous = JSON.parse(await readFile(recordFile, 'utf8').catch(() => '{}')) as Partial<FerryInstall>;
    const version = await currentVersion();
    if (
      previous.version === version &&
      previous.metricsUrl &&
      (await rolledOut(cluster, version)) &&
      (await answersReady(previous.metricsUrl))
    )
      return previous as FerryInstall;
    const installed = await install(cluster, version);
    await writeFile(recordFile, JSON.stringify(installed));
    return installed;
  });
}
