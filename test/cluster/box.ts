// Starts, inspects and stops the cluster in a box. One box per checkout: its state lives in test/cluster/.state/,
// described by cluster.json (ports, pids, credentials) so any later process (a test, `npm run cluster -- down`)
// can find and reuse or stop it.

import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { execFile, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureBinaries, kubernetesVersion } from './build.ts';
import { tools } from '../tools/catalog.ts';
import { toolVersion } from '../tools/go-install.ts';
import type { Binaries } from './build.ts';
import {
  apiserverSpec,
  controllerManagerSpec,
  etcdSpec,
  minioSpec,
  schedulerSpec,
  snapshotControllerSpec,
  csiControllerSpecs,
  csiNodeSpec,
  snapshotMetadataService,
} from './components.ts';
import type { BoxSettings, serviceRanges } from './components.ts';
import { daemonRunning, startDaemon, stopDaemon } from './daemons.ts';
import type { Daemon, DaemonSpec } from './daemons.ts';
import { httpStatus, waitHealthy } from './health.ts';
import { accessFromPki, Kube } from './kube.ts';
import type { KubeAccess } from './kube.ts';
import { processAlive, withLock } from './lock.ts';
import { moduleDir, nodeBinary, statePaths } from './paths.ts';
import type { StatePaths } from './paths.ts';
import { allocatePorts } from './ports.ts';
import type { Ports } from './ports.ts';
import { hostAddress, unmountUnder } from './node/host.ts';
import { refreshImages, startNodes, stopNodes } from './node/nodes.ts';
import { prepareVelero, veleroNamespace, veleroSpec } from './velero.ts';
import type { RealNodes } from './node/nodes.ts';
import { stopSecondSite } from './second-site.ts';
import type { SecondSite } from './second-site.ts';

const run = promisify(execFile);

export interface S3Settings {
  endpoint: string;
  region: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
}

export interface BoxRecord {
  kubernetesVersion: string;
  startedAt: string;
  /** the box stops when this process exits (set for boxes a test run started) */
  owner?: number;
  server: string;
  kubeconfig: string;
  pki: string;
  nodes: string[];
  ports: Ports;
  s3: S3Settings;
  daemons: Daemon[];
  /** Velero, installed as in a cluster (./velero.ts) */
  velero: { binary: string; namespace: string };
  /** the box's own program this box runs, to tell when the sources have moved on */
  ferrybox: string;
  /** seconds per start phase, for the record */
  timings: Record<string, number>;
  /** the nodes and what `down` restores on the host; set once the host is recorded, before it changes */
  realNodes?: RealNodes;
  /** another cluster on the same host, started on demand (second-site.ts) */
  secondSite?: SecondSite;
}

export interface UpOptions {
  nodes?: number;
  snapshotReadyDelay?: string;
  owner?: number;
  log?: (line: string) => void;
}

const s3Credentials = { accessKey: 'ferrybox', secretKey: 'ferrybox-secret-key' };
export const testBucket = 'ferry';
const startTimeoutMs = 90_000;

export async function readRecord(paths: StatePaths = statePaths()): Promise<BoxRecord | undefined> {
  const raw = await readFile(paths.record, 'utf8').catch(() => undefined);
  return raw === undefined ? undefined : (JSON.parse(raw) as BoxRecord);
}

/** What is wrong with a recorded box; empty when every process runs and the apiserver is ready. */
export async function problems(record: BoxRecord, paths: StatePaths = statePaths()): Promise<string[]> {
  const out: string[] = [];
  for (const d of [...record.daemons, ...(record.secondSite?.daemons ?? [])]) {
    if (!(await daemonRunning(d))) out.push(`${d.name} (pid ${d.pid}) is not running; see ${d.log}`);
  }
  let access: KubeAccess;
  try {
    access = accessFromPki(record.server, paths.pki);
  } catch {
    return [...out, `the box's certificates are missing from ${paths.pki}`];
  }
  if ((await httpStatus(`${record.server}/readyz`, access)) !== 200)
    out.push(`the apiserver at ${record.server} is not ready`);
  return out;
}

export function adminAccess(record: BoxRecord, paths: StatePaths = statePaths()): KubeAccess {
  return accessFromPki(record.server, paths.pki);
}

/** Starts the box, or returns the running one. Builds what the cache lacks first. */
export async function up(options: UpOptions = {}): Promise<{ record: BoxRecord; reused: boolean }> {
  const paths = statePaths();
  const log = options.log ?? (() => {});
  return withLock(paths.lock, 75 * 60_000, async () => {
    const existing = await readRecord(paths);
    if (existing?.realNodes && (await problems(existing, paths)).length === 0) {
      const second = existing.secondSite?.realNodes;
      const refreshed = [await refreshImages(existing.realNodes, log), second && (await refreshImages(second, log))];
      if (refreshed.some(Boolean)) await writeFile(paths.record, JSON.stringify(existing, null, 2));
      return { record: existing, reused: true };
    }
    if (existing) await stopAll(existing, log);
    const started = performance.now();
    const binaries = await ensureBinaries(log);
    const record = await start(paths, binaries, settingsFrom(options), options.owner, log);
    record.timings = {
      build: Math.round(binaries.seconds * 10) / 10,
      ...record.timings,
      total: Math.round((performance.now() - started) / 100) / 10,
    };
    await writeFile(paths.record, JSON.stringify(record, null, 2));
    if (options.owner !== undefined) spawnOwnerWatch(options.owner);
    return { record, reused: false };
  });
}

function settingsFrom(options: UpOptions): BoxSettings {
  return {
    nodes: options.nodes ?? Number(process.env.FERRYBOX_NODES || 2),
    snapshotReadyDelay: options.snapshotReadyDelay ?? (process.env.FERRYBOX_SNAPSHOT_READY_DELAY || '0s'),
    s3: s3Credentials,
  };
}

async function start(
  paths: StatePaths,
  b: Binaries,
  settings: BoxSettings,
  owner: number | undefined,
  log: (line: string) => void,
): Promise<BoxRecord> {
  await wipeState(paths);
  const ports = await allocatePorts(settings.nodes);
  const server = `https://127.0.0.1:${ports.apiserver}`;
  // pods reach the apiserver (through the kubernetes Service) and MinIO at the host's address
  const hostIP = await hostAddress();
  const timings: Record<string, number> = {};
  const record: BoxRecord = {
    kubernetesVersion,
    startedAt: new Date().toISOString(),
    owner,
    server,
    kubeconfig: paths.kubeconfig,
    pki: paths.pki,
    nodes: Array.from({ length: settings.nodes }, (_, i) => `node-${i + 1}`),
    ports,
    s3: { endpoint: `http://${hostIP}:${ports.minio}`, region: 'us-east-1', bucket: testBucket, ...settings.s3 },
    daemons: [],
    velero: { binary: b.velero.velero, namespace: veleroNamespace },
    ferrybox: b.ferrybox,
    timings,
  };
  const save = (): Promise<void> => writeFile(paths.record, JSON.stringify(record, null, 2));
  const steps = startSteps(paths, timings, record.daemons, save, log);
  try {
    await startSite(
      { paths, b, settings, site: 'primary', hostIP, ports, server, nodes: record.nodes, s3: record.s3 },
      steps,
      {
        recordHost: async (real) => {
          record.realNodes = real;
          await save();
        },
      },
    );
    await steps.phase('velero', async () => {
      const files = await prepareVelero(b.velero, paths, { ...record.s3, version: toolVersion(tools.velero) });
      await run(b.ferrybox, ['bootstrap', `--kubeconfig=${paths.kubeconfig}`, ...files]);
      await steps.launch(veleroSpec(b.velero, paths, ports.velero));
    });
    return record;
  } catch (err) {
    await stopAll(record, log);
    throw err;
  }
}

export interface StartSteps {
  /** runs one start phase, timed into the record */
  phase: (name: string, fn: () => Promise<void>) => Promise<void>;
  /** starts a daemon and records it at once, so `down` can stop a box whose start failed half-way */
  launch: (spec: DaemonSpec) => Promise<Daemon>;
  log: (line: string) => void;
}

export function startSteps(
  paths: StatePaths,
  timings: Record<string, number>,
  daemons: Daemon[],
  save: () => Promise<void>,
  log: (line: string) => void,
): StartSteps {
  return {
    log,
    phase: async (name, fn) => {
      const t0 = performance.now();
      log(`${name}...`);
      await fn();
      timings[name] = Math.round((performance.now() - t0) / 100) / 10;
    },
    launch: async (spec) => {
      const d = startDaemon(spec, paths.logs);
      daemons.push(d);
      await save();
      return d;
    },
  };
}

export interface SiteStart {
  paths: StatePaths;
  b: Binaries;
  settings: BoxSettings;
  site: keyof typeof serviceRanges;
  hostIP: string;
  ports: Ports;
  server: string;
  nodes: string[];
  s3: S3Settings;
}

/**
 * One control plane with its MinIO, storage driver and real nodes, healthy: the box's first site, or the second
 * (another apiserver, etcd, controllers, MinIO and node on the same host; `second-site.ts`).
 */
export async function startSite(
  s: SiteStart,
  steps: StartSteps,
  nodes: { recordHost: (real: RealNodes) => Promise<void>; joining?: { firstIndex: number } },
): Promise<void> {
  const { paths, b, ports, hostIP, server, phase, launch } = { ...s, ...steps };
  await phase('certificates', async () => {
    const names = [`--nodes=${s.nodes.join(',')}`, `--host-ip=${hostIP}`];
    await run(b.ferrybox, ['pki', `--dir=${paths.pki}`, `--server=${server}`, ...names]);
  });
  const tls = accessFromPki(server, paths.pki);
  await phase('etcd', async () => {
    const etcd = await launch(etcdSpec(b, paths, ports));
    await waitHealthy(etcd, `http://127.0.0.1:${ports.etcd}/health`, startTimeoutMs);
  });
  await phase('apiserver', async () => {
    const apiserver = await launch(apiserverSpec(b, paths, ports, hostIP, s.site));
    await waitHealthy(apiserver, `${server}/readyz`, startTimeoutMs, tls);
  });
  const kcm = await launch(controllerManagerSpec(b, paths, ports));
  const scheduler = await launch(schedulerSpec(b, paths, ports));
  const minio = await launch(minioSpec(b, paths, ports, s.settings, hostIP));
  await phase('manifests', async () => {
    const own = (await readdir(join(moduleDir, 'manifests')))
      .filter((n) => n.endsWith('.yaml'))
      .sort()
      .map((n) => join(moduleDir, 'manifests', n));
    const service = join(paths.root, 'snapshot-metadata-service.json');
    const ca = await readFile(join(paths.pki, 'ca.crt'), 'utf8');
    await writeFile(service, JSON.stringify(snapshotMetadataService(hostIP, ports, ca)));
    await run(b.ferrybox, ['bootstrap', `--kubeconfig=${paths.kubeconfig}`, ...b.manifests, ...own, service]);
  });
  await launch(snapshotControllerSpec(b, paths));
  for (const spec of csiControllerSpecs(b, paths, ports, s.settings)) await launch(spec);
  await startNodes({
    names: s.nodes,
    nodesDir: paths.nodes,
    pki: paths.pki,
    ferrybox: b.ferrybox,
    hostIP,
    kubeletPortBase: ports.kubeletBase,
    launch,
    csiNode: (node, kubeletRoot) => csiNodeSpec(b.ferryCsi, paths.storage, node, kubeletRoot),
    log: steps.log,
    phase,
    recordHost: nodes.recordHost,
    joining: nodes.joining,
  });
  await phase('controllers', async () => {
    await waitHealthy(kcm, `https://127.0.0.1:${ports.controllerManager}/healthz`, startTimeoutMs);
    await waitHealthy(scheduler, `https://127.0.0.1:${ports.scheduler}/healthz`, startTimeoutMs);
  });
  await phase('s3', async () => {
    await waitHealthy(minio, `${s.s3.endpoint}/minio/health/ready`, startTimeoutMs);
    await createBucket(s.s3);
  });
  await phase('nodes', () => waitNodesReady(new Kube(tls), s.nodes));
}

/** A bucket on a site's MinIO (`s3.bucket` unless named), with S3 Object Lock on request (it can only be set now). */
export async function createBucket(s3: S3Settings, bucket = s3.bucket, objectLock = false): Promise<void> {
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: s3.region,
    forcePathStyle: true,
    credentials: { accessKeyId: s3.accessKey, secretAccessKey: s3.secretKey },
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: objectLock || undefined }));
  } finally {
    client.destroy();
  }
}

/** Nodes Ready and schedulable (the node lifecycle controller has lifted the not-ready taint), and the default
 * namespace's ServiceAccount made, so a test's first pod is admitted and scheduled. */
async function waitNodesReady(kube: Kube, nodes: string[]): Promise<void> {
  try {
    for (const name of nodes) {
      await kube.waitFor(
        `/api/v1/nodes/${name}`,
        `node ${name} to be Ready and untainted`,
        (node) => {
          const ready = (node.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
          const tainted = (node.spec?.taints ?? []).some((t: any) => t.key === 'node.kubernetes.io/not-ready');
          return ready && !tainted ? true : undefined;
        },
        startTimeoutMs,
      );
    }
    await kube.waitFor(
      '/api/v1/namespaces/default/serviceaccounts/default',
      'the default ServiceAccount',
      () => true,
      startTimeoutMs,
    );
  } finally {
    kube.close();
  }
}

/** Stops the nodes first (they stop the pods), then everything else in reverse start order. */
async function stopAll(record: BoxRecord, log: (line: string) => void): Promise<void> {
  if (record.secondSite) await stopSecondSite(record.secondSite, record.ferrybox, log);
  if (record.realNodes) await stopNodes(record.realNodes, record.daemons, record.ferrybox, log);
  const order = [...record.daemons].reverse();
  for (const d of order) {
    log(`stopping ${d.name}`);
    await stopDaemon(d, 5_000);
  }
  // block volumes the kubelets had attached through the CSI driver: the host's loop devices are shared
  await detachLoops(statePaths().root);
}

/** A detached `cli.ts watch-owner PID`: it stops the box when the test run that started it has exited. */
function spawnOwnerWatch(owner: number): void {
  const child = spawn(nodeBinary, [join(moduleDir, 'cli.ts'), 'watch-owner', String(owner)], {
    detached: true,
    stdio: 'ignore',
    env: process.env,
  });
  child.unref();
}

/** Waits for the owner to exit, then stops the box it started (unless it was replaced meanwhile). */
export async function watchOwner(owner: number): Promise<void> {
  const startedAt = (await readRecord())?.startedAt;
  while (processAlive(owner)) {
    await new Promise((r) => setTimeout(r, 1000));
    if ((await readRecord())?.startedAt !== startedAt) return;
  }
  // the check is repeated under the lock: a run that followed the owner may have stopped this box and started its own
  // while this watch waited for the lock, and that box is not the watch's to stop
  if (startedAt !== undefined) await down(() => {}, startedAt);
}

/** Stops the running box; given `startedAt`, only the box started then. */
export async function down(log: (line: string) => void = () => {}, startedAt?: string): Promise<boolean> {
  const paths = statePaths();
  return withLock(paths.lock, 10 * 60_000, async () => {
    const record = await readRecord(paths);
    if (!record || (startedAt !== undefined && record.startedAt !== startedAt)) return false;
    await stopAll(record, log);
    await rm(paths.record, { force: true });
    return true;
  });
}

/** Clears the previous box's state; loop devices a crashed box left attached are released first. */
async function wipeState(paths: StatePaths): Promise<void> {
  await detachLoops(paths.root);
  // a crashed box's real nodes may have left mounts (rootfs overlays, tmpfs volumes) that rm must not descend into
  await unmountUnder(paths.root);
  await mkdir(paths.root, { recursive: true });
  for (const name of await readdir(paths.root)) {
    if (join(paths.root, name) !== paths.lock) await rm(join(paths.root, name), { recursive: true, force: true });
  }
  for (const dir of [paths.pki, paths.etcd, paths.logs, paths.minio, paths.nodes, paths.storage]) {
    await mkdir(dir, { recursive: true });
  }
}

interface LoopDevice {
  name: string;
  'back-file': string | null;
  'back-ino': number;
  'back-maj:min': string;
}

/** Linux's encoding of a device number, as `stat` reports st_dev. */
const deviceNumber = (majMin: string): number => {
  const [major, minor] = majMin.trim().split(':').map(Number);
  return (minor & 0xff) | (major << 8) | ((minor & ~0xff) << 12);
};

/**
 * Detaches the loop devices backed by files under `root` (block volumes of the CSI driver), and first those the
 * kubelet stacked on them: it holds a block volume's device node open through a loop device of its own, whose backing
 * file reads as "/" once the node's bind mount is gone, and which keeps the volume's loop device busy.
 */
async function detachLoops(root: string): Promise<void> {
  const { stdout } = await run('losetup', [
    '--list',
    '--json',
    '--output',
    'NAME,BACK-FILE,BACK-INO,BACK-MAJ:MIN',
  ]).catch(() => ({ stdout: '' }));
  if (!stdout.trim()) return;
  const devices = (JSON.parse(stdout) as { loopdevices: LoopDevice[] }).loopdevices;
  const ours = devices.filter((d) => d['back-file']?.startsWith(root));
  const nodes = new Set<string>();
  for (const d of ours) {
    const st = await stat(d.name).catch(() => undefined);
    if (st) nodes.add(`${st.dev}:${st.ino}`);
  }
  const stacked = devices.filter((d) => nodes.has(`${deviceNumber(d['back-maj:min'])}:${d['back-ino']}`));
  for (const d of [...stacked, ...ours]) await run('losetup', ['--detach', d.name]).catch(() => undefined);
}
