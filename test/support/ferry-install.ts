// Installs ferry from deploy/ into the cluster in a box, as `kubectl apply -k deploy/` would, with the two changes
// the box needs: it has no Services, so the webhook calls the dispatcher at https://127.0.0.1:PORT (a certificate
// from a throwaway CA), and every pod shares one network, so the dispatcher runs as one replica on free ports. As an
// operator whose apiserver presents a webhook client certificate would, it gives the dispatcher that certificate's
// CA (ConfigMap ferry-webhook-client-ca) and turns the check on (FERRY_CLIENT_CA, FERRY_CLIENT_NAMES): only the
// box's apiserver, or a test holding its certificate (apiserverClientCertificate), is served.
//
//   const cluster = await useCluster('my-suite');
//   const ferry = await installFerry(cluster);
//
// Suites share one install, also across test runs of several people on one box (a lock keeps two from installing
// at once). It is redone only when the dispatcher is not answering or the code and manifests it runs have changed,
// and then without a gap: the new dispatcher starts on new ports, the webhook switches to it, the old one goes.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { applyAll } from '../../src/shared/install/apply.ts';
import { renderInstall } from '../../src/shared/install/install.ts';
import { HttpKube } from '../../src/shared/kube/client.ts';
import type { KubeObject as ApplyObject } from '../../src/shared/kube/kube.ts';
import { withLock } from '../cluster/lock.ts';
import { checkoutDir, statePaths } from '../cluster/paths.ts';
import { freePort } from '../cluster/ports.ts';
import type { KubeObject } from '../cluster/kube.ts';
import { makeTestCertificates } from './test-ca.ts';
import { answersReady, awaitDispatcher } from './dispatcher-start.ts';
import type { TestCluster } from './cluster.ts';

const run = promisify(execFile);

export const ferryNamespace = 'ferry-system';

/** All the installer needs of the box: its admin kubeconfig (a TestCluster or the box's record, as `npm run demo` has). */
export type BoxAccess = Pick<TestCluster, 'kubeconfig'>;

export interface FerryInstall {
  webhookPort: number;
  metricsPort: number;
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

/** Kinds the box cannot serve as deploy/ has them; the installer makes its own versions. */
const replaced = new Set(['Deployment', 'Service', 'PodDisruptionBudget', 'ValidatingWebhookConfiguration']);
const installLabel = 'ferrybox.ferry.dev/install';

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
export async function renderDeploy(): Promise<KubeObject[]> {
  return renderInstall({ dir: join(checkoutDir, 'deploy') });
}

/** The box's apiserver presents this pair to webhooks (test/cluster/internal/pki/box.go). */
const webhookClientDir = (): string => join(statePaths().pki, 'webhook-client');
export const webhookClientName = 'kube-apiserver-webhook-client';

/** The client certificate and key the box's apiserver presents to webhooks, as PEM: to call the dispatcher as it does. */
export async function apiserverClientCertificate(): Promise<{ cert: string; key: string }> {
  const [cert, key] = await Promise.all(
    ['client.crt', 'client.key'].map((f) => readFile(join(webhookClientDir(), f), 'utf8')),
  );
  return { cert, key };
}

function dispatcherDeployment(
  rendered: KubeObject[],
  name: string,
  version: string,
  webhookPort: number,
  metricsPort: number,
): KubeObject {
  const deployment = structuredClone(
    rendered.find((o) => o.kind === 'Deployment' && o.metadata.name === 'ferry-dispatcher'),
  );
  if (!deployment) throw new Error('deploy/ renders no Deployment ferry-dispatcher.');
  deployment.metadata.name = name;
  deployment.spec.replicas = 1;
  // old and new dispatchers run side by side during a switch: each selects its own pod
  deployment.spec.selector.matchLabels[installLabel] = version;
  deployment.spec.template.metadata.labels[installLabel] = version;
  const container = deployment.spec.template.spec.containers[0];
  const mount = container.volumeMounts.find((m: KubeObject) => m.name === 'client-ca').mountPath;
  container.env = [
    ...container.env,
    { name: 'FERRY_WEBHOOK_PORT', value: String(webhookPort) },
    { name: 'FERRY_METRICS_PORT', value: String(metricsPort) },
    { name: 'FERRY_CLIENT_CA', value: `${mount}/ca.crt` },
    { name: 'FERRY_CLIENT_NAMES', value: webhookClientName },
  ];
  delete container.ports;
  return deployment;
}

function webhookConfiguration(rendered: KubeObject[], webhookPort: number, ca: string): KubeObject {
  const config = structuredClone(rendered.find((o) => o.kind === 'ValidatingWebhookConfiguration'));
  if (!config) throw new Error('deploy/ renders no ValidatingWebhookConfiguration.');
  for (const hook of config.webhooks) {
    hook.clientConfig = {
      url: `https://127.0.0.1:${webhookPort}${hook.clientConfig.service.path}`,
      caBundle: Buffer.from(ca).toString('base64'),
    };
  }
  return config;
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

/**
 * Applies the TLS Secret and a dispatcher Deployment on free ports and waits until it answers; a port taken before the
 * dispatcher bound it means new ports (up to three attempts), any other failure to start is thrown with its reasons.
 */
async function startDispatcher(
  cluster: BoxAccess,
  rendered: KubeObject[],
  version: string,
  secret: KubeObject,
): Promise<{ webhookPort: number; metricsPort: number; deployment: KubeObject }> {
  for (let attempt = 1; ; attempt++) {
    const webhookPort = await freePort();
    const metricsPort = await freePort();
    const deployment = dispatcherDeployment(rendered, `ferry-dispatcher-${version}`, version, webhookPort, metricsPort);
    deployment.spec.template.spec.volumes.find((v: KubeObject) => v.name === 'tls').secret.secretName =
      secret.metadata.name;
    await apply(cluster, [secret, deployment]);
    const start = await awaitDispatcher({
      kubectl: (args) => kubectl(cluster, args),
      namespace: ferryNamespace,
      selector: `${installLabel}=${version}`,
      metricsPort,
    });
    if (start.ready) return { webhookPort, metricsPort, deployment };
    if (!start.portTaken || attempt === 3)
      throw new Error(
        `The dispatcher on 127.0.0.1:${metricsPort} (webhook ${webhookPort}) did not start, attempt ${attempt}: ${start.why}`,
      );
  }
}

async function install(cluster: BoxAccess, version: string): Promise<FerryInstall> {
  const rendered = await renderDeploy();
  const plain = rendered.filter((o) => !replaced.has(o.kind));
  await apply(cluster, plain);

  const dir = join(statePaths().root, 'ferry-install', version);
  await mkdir(dir, { recursive: true });
  const certs = await makeTestCertificates(dir, 'tls.crt', 'tls.key');
  const [cert, key, ca] = await Promise.all([
    readFile(certs.certFile, 'utf8'),
    readFile(certs.keyFile, 'utf8'),
    readFile(certs.caFile, 'utf8'),
  ]);
  const secretName = `ferry-dispatcher-tls-${version}`;
  const secret = {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/tls',
    metadata: { name: secretName, namespace: ferryNamespace },
    stringData: { 'tls.crt': cert, 'tls.key': key },
  };

  const clientCA = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'ferry-webhook-client-ca', namespace: ferryNamespace },
    data: { 'ca.crt': await readFile(join(webhookClientDir(), 'ca.crt'), 'utf8') },
  };
  await apply(cluster, [clientCA]);
  const { webhookPort, metricsPort, deployment } = await startDispatcher(cluster, rendered, version, secret);
  await apply(cluster, [webhookConfiguration(rendered, webhookPort, ca)]);
  // every other dispatcher goes: an earlier install's, or one whose install did not finish
  const others = (
    await kubectl(cluster, [
      'get',
      'deployment',
      '-n',
      ferryNamespace,
      '-l',
      'app.kubernetes.io/component=dispatcher',
      '-o',
      'name',
    ])
  )
    .split('\n')
    .filter((n) => n && n !== `deployment.apps/${deployment.metadata.name}`);
  if (others.length)
    await kubectl(cluster, ['delete', '-n', ferryNamespace, '--ignore-not-found', '--wait=false', ...others]);
  return { webhookPort, metricsPort, ca, deployment: deployment.metadata.name, version };
}

export async function installFerry(cluster: BoxAccess): Promise<FerryInstall> {
  const recordFile = join(statePaths().root, 'ferry-install.json');
  return withLock(join(statePaths().root, 'ferry-install.lock'), 10 * 60_000, async () => {
    const previous = JSON.parse(await readFile(recordFile, 'utf8').catch(() => '{}')) as Partial<FerryInstall>;
    const version = await currentVersion();
    if (previous.version === version && previous.metricsPort && (await answersReady(previous.metricsPort)))
      return previous as FerryInstall;
    const installed = await install(cluster, version);
    await writeFile(recordFile, JSON.stringify(installed));
    return installed;
  });
}
