// Installs ferry from deploy/ into the cluster in a box, as `kubectl apply -k deploy/` would, with the two changes
// the box needs: it has no Services, so the webhook calls the dispatcher at https://127.0.0.1:PORT (a certificate
// from a throwaway CA), and every pod shares one network, so the dispatcher runs as one replica on free ports.
//
//   const cluster = await useCluster('my-suite');
//   const ferry = await installFerry(cluster);      // once per test run; later suites of the run reuse it
//
// The install is shared by the suites of one test run (a lock keeps two from installing at once) and redone by
// the next run, so the dispatcher always runs the checkout's current code.
import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { withLock } from '../cluster/lock.ts';
import { checkoutDir, statePaths } from '../cluster/paths.ts';
import { freePort } from '../cluster/ports.ts';
import type { KubeObject } from '../cluster/kube.ts';
import { makeTestCertificates } from './test-ca.ts';
import type { TestCluster } from './cluster.ts';

const run = promisify(execFile);

export const ferryNamespace = 'ferry-system';

export interface FerryInstall {
  webhookPort: number;
  metricsPort: number;
  /** PEM of the CA that signed the dispatcher's certificate */
  ca: string;
  /** the test run that installed it */
  owner: number;
}

/** Kinds the box cannot serve as deploy/ has them; the installer makes its own versions. */
const replaced = new Set(['Deployment', 'Service', 'PodDisruptionBudget', 'ValidatingWebhookConfiguration']);

function runOwner(): number {
  return process.env.NODE_TEST_CONTEXT ? process.ppid : process.pid;
}

async function kubectl(cluster: TestCluster, args: string[], input?: string): Promise<string> {
  const child = run('kubectl', ['--kubeconfig', cluster.kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 });
  if (input !== undefined) child.child.stdin?.end(input);
  return (await child).stdout;
}

/** deploy/ rendered by kustomize, as objects. */
export async function renderDeploy(): Promise<KubeObject[]> {
  const { stdout } = await run('kubectl', ['kustomize', join(checkoutDir, 'deploy')], { maxBuffer: 64 * 1024 * 1024 });
  return (yaml.loadAll(stdout) as KubeObject[]).filter(Boolean);
}

async function healthy(port: number): Promise<boolean> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) })).ok;
  } catch {
    return false;
  }
}

async function waitHealthy(port: number, what: string, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await healthy(port))) {
    if (Date.now() > deadline) throw new Error(`${what} did not become ready on 127.0.0.1:${port} within ${timeoutMs / 1000} s.`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

function dispatcherDeployment(rendered: KubeObject[], webhookPort: number, metricsPort: number): KubeObject {
  const deployment = structuredClone(rendered.find((o) => o.kind === 'Deployment' && o.metadata.name === 'ferry-dispatcher'));
  if (!deployment) throw new Error('deploy/ renders no Deployment ferry-dispatcher.');
  deployment.spec.replicas = 1;
  deployment.spec.strategy = { type: 'Recreate' };
  const container = deployment.spec.template.spec.containers[0];
  container.env = [...container.env, { name: 'FERRY_WEBHOOK_PORT', value: String(webhookPort) }, { name: 'FERRY_METRICS_PORT', value: String(metricsPort) }];
  delete container.ports;
  return deployment;
}

function webhookConfiguration(rendered: KubeObject[], webhookPort: number, ca: string): KubeObject {
  const config = structuredClone(rendered.find((o) => o.kind === 'ValidatingWebhookConfiguration'));
  if (!config) throw new Error('deploy/ renders no ValidatingWebhookConfiguration.');
  for (const hook of config.webhooks) {
    hook.clientConfig = { url: `https://127.0.0.1:${webhookPort}${hook.clientConfig.service.path}`, caBundle: Buffer.from(ca).toString('base64') };
  }
  return config;
}

async function install(cluster: TestCluster, recordFile: string): Promise<FerryInstall> {
  const rendered = await renderDeploy();
  // the previous run's dispatcher (old code, maybe gone) must not judge this run's objects while they are applied
  await kubectl(cluster, ['delete', 'validatingwebhookconfiguration', 'ferry-dispatcher', '--ignore-not-found']);
  const plain = rendered.filter((o) => !replaced.has(o.kind));
  await kubectl(cluster, ['apply', '--server-side', '--force-conflicts', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: plain }));
  await kubectl(cluster, ['wait', '--for=condition=Established', '--timeout=60s', ...plain.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => `crd/${o.metadata.name}`)]);

  const dir = join(statePaths().root, 'ferry-install');
  await mkdir(dir, { recursive: true });
  const certs = await makeTestCertificates(dir, 'tls.crt', 'tls.key');
  const [cert, key, ca] = await Promise.all([readFile(certs.certFile, 'utf8'), readFile(certs.keyFile, 'utf8'), readFile(certs.caFile, 'utf8')]);
  const secret = { apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/tls', metadata: { name: 'ferry-dispatcher-tls', namespace: ferryNamespace }, stringData: { 'tls.crt': cert, 'tls.key': key } };

  const webhookPort = await freePort();
  const metricsPort = await freePort();
  await kubectl(cluster, ['delete', 'deployment', '-n', ferryNamespace, 'ferry-dispatcher', '--ignore-not-found', '--wait=true']);
  await kubectl(cluster, ['apply', '--server-side', '--force-conflicts', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [secret, dispatcherDeployment(rendered, webhookPort, metricsPort)] }));
  await waitHealthy(metricsPort, 'The dispatcher');
  await kubectl(cluster, ['apply', '--server-side', '--force-conflicts', '-f', '-'], JSON.stringify(webhookConfiguration(rendered, webhookPort, ca)));
  const installed: FerryInstall = { webhookPort, metricsPort, ca, owner: runOwner() };
  await writeFile(recordFile, JSON.stringify(installed));
  return installed;
}

export async function installFerry(cluster: TestCluster): Promise<FerryInstall> {
  const recordFile = join(statePaths().root, 'ferry-install.json');
  return withLock(join(statePaths().root, 'ferry-install.lock'), 10 * 60_000, async () => {
    const previous = JSON.parse(await readFile(recordFile, 'utf8').catch(() => '{}')) as Partial<FerryInstall>;
    if (previous.owner === runOwner() && previous.metricsPort && (await healthy(previous.metricsPort))) return previous as FerryInstall;
    return install(cluster, recordFile);
  });
}
