// Builds the box's binaries once into the cache, keyed by what determines them:
//   <cache>/cluster/<k8s version>-<hash of go.mod, go.sum, Go version, flags>/
//     bin/        etcd kube-apiserver kube-controller-manager kube-scheduler snapshot-controller csi-snapshotter
//     manifests/  the snapshot and SnapshotMetadataService CRDs and the snapshot-controller RBAC, from their modules
//     ferrybox-<hash of the box's Go sources>/ferrybox ferry-csi
// Everything comes from one `go build` so the Kubernetes packages compile once for all binaries. MinIO and the
// CSI sidecars external-provisioner and csi-snapshot-metadata, and Velero with its AWS plugin, are pinned tools of
// test/tools (their releases do not compile against this module's Kubernetes 1.37 libraries, so each builds with
// its own), in <cache>/tools/.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { access, constants, copyFile, mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { tools } from '../tools/catalog.ts';
import { installTool } from '../tools/go-install.ts';
import { withLock } from './lock.ts';
import { cacheRoot, moduleDir } from './paths.ts';

export const kubernetesVersion = 'v1.37.1';

// the client module csi-snapshot-metadata v0.2.0 requires (test/tools/csi-snapshot-metadata/go.mod)
const snapshotMetadataClient = 'github.com/kubernetes-csi/external-snapshot-metadata/client';
const snapshotMetadataClientVersion = 'v0.1.0';

const upstream = {
  etcd: 'go.etcd.io/etcd/server/v3',
  'kube-apiserver': 'k8s.io/kubernetes/cmd/kube-apiserver',
  'kube-controller-manager': 'k8s.io/kubernetes/cmd/kube-controller-manager',
  'kube-scheduler': 'k8s.io/kubernetes/cmd/kube-scheduler',
  'snapshot-controller': 'github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller',
  'csi-snapshotter': 'github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter',
} as const;

/** The box's own programs, rebuilt whenever its Go sources change. */
const ownPackages = ['./cmd/ferrybox', './cmd/ferry-csi'];

export type UpstreamBinary = keyof typeof upstream;

// The version the components report, as Kubernetes' own build stamps it.
const ldflags = [
  '-s',
  '-w',
  `-X k8s.io/component-base/version.gitVersion=${kubernetesVersion}`,
  `-X k8s.io/component-base/version.gitMajor=1`,
  `-X k8s.io/component-base/version.gitMinor=${kubernetesVersion.split('.')[1]}`,
  '-X k8s.io/component-base/version.gitTreeState=clean',
].join(' ');

export interface Binaries {
  bin: Record<UpstreamBinary, string>;
  ferrybox: string;
  /** the CSI driver (internal/csi) */
  ferryCsi: string;
  /** the CSI sidecars built from their own modules; csi-snapshotter is in bin */
  sidecars: { 'csi-provisioner': string; 'csi-snapshot-metadata': string };
  minio: string;
  /** Velero's server and CLI, and its AWS object store plugin (test/tools) */
  velero: { velero: string; plugin: string };
  /** the CRD files, then the snapshot-controller RBAC, in apply order */
  manifests: string[];
  /** whether anything had to be built; seconds covers the whole call */
  built: boolean;
  seconds: number;
}

/** Go's environment for builds of this module: the box's cache keys assume these flags. */
export function goEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    PATH: `${process.env.PATH}:/usr/local/go/bin`,
    GOTOOLCHAIN: 'local',
    GOFLAGS: '-mod=readonly -buildvcs=false',
  };
}

function run(cmd: string, args: string[], log: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: moduleDir, env: goEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => {
      err = (err + b.toString()).slice(-8000);
      for (const line of b.toString().split('\n')) if (line.trim()) log(line);
    });
    child.on('error', (e) =>
      reject(new Error(`Cannot run ${cmd} (is Go installed in /usr/local/go or on PATH?): ${e.message}`)),
    );
    child.on('exit', (code) => {
      if (code === 0) resolve(out);
      else reject(new Error(`${cmd} ${args.join(' ')} failed with exit code ${code}:\n${err}`));
    });
  });
}

function sha(parts: (string | Buffer)[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\0');
  return h.digest('hex').slice(0, 16);
}

async function goSources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith('.go')) out.push(join(entry.parentPath, entry.name));
  }
  return out.sort();
}

async function exists(path: string): Promise<boolean> {
  return access(path, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** The cache folder of this module's pinned versions and the ferrybox build of the current sources. */
export async function cacheDirs(): Promise<{ upstreamDir: string; ferryboxDir: string }> {
  const goVersion = (await run('go', ['env', 'GOVERSION'], () => {})).trim();
  const [mod, sum] = await Promise.all([readFile(join(moduleDir, 'go.mod')), readFile(join(moduleDir, 'go.sum'))]);
  const key = sha([mod, sum, goVersion, ldflags]);
  const upstreamDir = join(cacheRoot(), 'cluster', `${kubernetesVersion}-${key}`);
  const sources = [...(await goSources(join(moduleDir, 'cmd'))), ...(await goSources(join(moduleDir, 'internal')))];
  const contents = await Promise.all(sources.map(async (f) => [relative(moduleDir, f), await readFile(f)] as const));
  const ferryboxDir = join(upstreamDir, `ferrybox-${sha([key, ...contents.flat()])}`);
  return { upstreamDir, ferryboxDir };
}

async function copyManifests(target: string, log: (line: string) => void): Promise<void> {
  const raw = await run(
    'go',
    [
      'mod',
      'download',
      '-json',
      'github.com/kubernetes-csi/external-snapshotter/client/v8',
      'github.com/kubernetes-csi/external-snapshotter/v8',
    ],
    log,
  );
  const dirs = raw
    .split(/\n}\n?/)
    .filter((s) => s.trim())
    .map((s) => (JSON.parse(`${s}}`) as { Dir: string }).Dir);
  const [clientDir, controllerDir] = dirs;
  await mkdir(target, { recursive: true });
  const crdDir = join(clientDir, 'config', 'crd');
  for (const name of (await readdir(crdDir)).filter((n) => n.endsWith('.yaml') && n !== 'kustomization.yaml')) {
    await copyFile(join(crdDir, name), join(target, `10-${name}`));
  }
  const rbac = join(controllerDir, 'deploy', 'kubernetes', 'snapshot-controller', 'rbac-snapshot-controller.yaml');
  await copyFile(rbac, join(target, '20-rbac-snapshot-controller.yaml'));
  // the SnapshotMetadataService CRD, from the client module of the csi-snapshot-metadata sidecar the box runs
  const metadata = JSON.parse(
    await run('go', ['mod', 'download', '-json', `${snapshotMetadataClient}@${snapshotMetadataClientVersion}`], log),
  ) as { Dir: string };
  const crd = 'cbt.storage.k8s.io_snapshotmetadataservices.yaml';
  await copyFile(join(metadata.Dir, 'config', 'crd', crd), join(target, `10-${crd}`));
}

async function buildInto(staging: string, packages: string[], log: (line: string) => void): Promise<void> {
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  log(`go build ${packages.join(' ')}`);
  await run('go', ['build', '-trimpath', `-ldflags=${ldflags}`, '-o', `${staging}/`, ...packages], log);
}

async function manifestList(dir: string): Promise<string[]> {
  return (await readdir(dir))
    .filter((n) => n.endsWith('.yaml'))
    .sort()
    .map((n) => join(dir, n));
}

/** Returns the binaries, building what the cache lacks. Safe to call from several processes at once. */
export async function ensureBinaries(log: (line: string) => void = () => {}): Promise<Binaries> {
  const started = performance.now();
  const { upstreamDir, ferryboxDir } = await cacheDirs();
  const bin = Object.fromEntries(Object.keys(upstream).map((n) => [n, join(upstreamDir, 'bin', n)])) as Record<
    UpstreamBinary,
    string
  >;
  const ferrybox = join(ferryboxDir, 'ferrybox');
  const ferryCsi = join(ferryboxDir, 'ferry-csi');
  const ready = async (): Promise<boolean> =>
    (await Promise.all([...Object.values(bin), ferrybox, ferryCsi].map(exists))).every(Boolean);
  let built = false;
  if (!(await ready())) {
    await withLock(`${upstreamDir}.lock`, 60 * 60_000, async () => {
      if (await ready()) return;
      built = true;
      const staging = `${upstreamDir}.staging-${process.pid}`;
      try {
        if (!(await exists(bin.etcd))) {
          await buildInto(staging, [...ownPackages, ...Object.values(upstream)], log);
          await copyManifests(join(staging, 'manifests'), log);
          await mkdir(join(staging, 'bin'), { recursive: true });
          for (const name of Object.keys(upstream)) {
            // go names a module-root main package after its path ("server" for etcd's)
            const built = name === 'etcd' ? 'server' : name;
            await rename(join(staging, built), join(staging, 'bin', name));
          }
          await rm(upstreamDir, { recursive: true, force: true });
          await rename(staging, upstreamDir);
          await mkdir(ferryboxDir, { recursive: true });
          await rename(join(upstreamDir, 'ferrybox'), ferrybox);
          await rename(join(upstreamDir, 'ferry-csi'), ferryCsi);
        } else {
          await buildInto(staging, ownPackages, log);
          await rm(ferryboxDir, { recursive: true, force: true });
          await rename(staging, ferryboxDir);
        }
        await pruneOldFerrybox(upstreamDir, ferryboxDir);
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    });
  }
  // one at a time: each Go build already uses every core
  const minio = await installTool(tools.minio);
  const provisioner = await installTool(tools['csi-provisioner']);
  const snapshotMetadata = await installTool(tools['csi-snapshot-metadata']);
  const velero = await installTool(tools.velero);
  const veleroPlugin = await installTool(tools['velero-plugin-for-aws']);
  return {
    bin,
    ferrybox,
    ferryCsi,
    minio: minio.path,
    sidecars: { 'csi-provisioner': provisioner.path, 'csi-snapshot-metadata': snapshotMetadata.path },
    velero: { velero: velero.path, plugin: veleroPlugin.path },
    manifests: await manifestList(join(upstreamDir, 'manifests')),
    built: [minio, provisioner, snapshotMetadata, velero, veleroPlugin].some((t) => t.built) || built,
    seconds: (performance.now() - started) / 1000,
  };
}

const nodeUpstream = {
  kubelet: 'k8s.io/kubernetes/cmd/kubelet',
  'kube-proxy': 'k8s.io/kubernetes/cmd/kube-proxy',
} as const;

export type NodeBinary = keyof typeof nodeUpstream;

/** The real nodes' kubelet and kube-proxy, built on demand (only a box with real nodes runs them) beside the
 * control plane's binaries, from the same module and flags: <cache>/cluster/<version>-<key>/node-bin/. */
export async function ensureNodeBinaries(
  log: (line: string) => void = () => {},
): Promise<{ bin: Record<NodeBinary, string>; seconds: number }> {
  const started = performance.now();
  const dir = join((await cacheDirs()).upstreamDir, 'node-bin');
  const bin = Object.fromEntries(Object.keys(nodeUpstream).map((n) => [n, join(dir, n)])) as Record<NodeBinary, string>;
  const ready = async (): Promise<boolean> => (await Promise.all(Object.values(bin).map(exists))).every(Boolean);
  if (!(await ready())) {
    await withLock(`${dir}.lock`, 60 * 60_000, async () => {
      if (await ready()) return;
      const staging = `${dir}.staging-${process.pid}`;
      try {
        await buildInto(staging, Object.values(nodeUpstream), log);
        await rm(dir, { recursive: true, force: true });
        await rename(staging, dir);
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
    });
  }
  return { bin, seconds: (performance.now() - started) / 1000 };
}

/** Builds of earlier sources are dead weight; a running box keeps its deleted binary open. */
async function pruneOldFerrybox(upstreamDir: string, keep: string): Promise<void> {
  for (const name of await readdir(upstreamDir)) {
    const path = join(upstreamDir, name);
    if (name.startsWith('ferrybox-') && path !== keep) await rm(path, { recursive: true, force: true });
  }
}
