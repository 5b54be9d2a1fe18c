// What the step suites share on the cluster in a box: ferry installed from deploy/, a storage location with its
// Secrets, namespaces, PVCs whose data is written straight into their volume on the host (the box's volumes are
// directories and image files), and views of the outcome: phases over time, leftover objects, the repository.
import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import type { BackupStorageLocationSpec, DataDownload, DataUpload } from '../../src/shared/api/types.ts';
import { labels } from '../../src/shared/step-job/contract.ts';
import { openBackend } from '../../src/engine/backend/open.ts';
import { repositoryLocation, repositoryPassword } from '../../src/shared/location/repository.ts';
import { lockStore } from '../../src/engine/repository/lock-store.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { listSnapshots } from '../../src/engine/repository/snapshots.ts';
import type { SnapshotEntry } from '../../src/engine/snapshot/select.ts';
import { volumeFile } from '../cluster/testing.ts';
import { useCluster, type TestCluster } from '../support/cluster.ts';
import type { Kube } from '../cluster/kube.ts';
import { ferryNamespace, installFerry } from '../support/ferry-install.ts';
import { restic } from '../support/restic.ts';

export type Obj = Record<string, any>;
export { ferryNamespace };

export const api = '/apis/ferry.dev/v1alpha1';
export const claims = (ns: string): string => `/api/v1/namespaces/${ns}/persistentvolumeclaims`;
export const uploads = (ns: string): string => `${api}/namespaces/${ns}/datauploads`;
export const downloads = (ns: string): string => `${api}/namespaces/${ns}/datadownloads`;
export const snapshots = (ns: string): string => `/apis/snapshot.storage.k8s.io/v1/namespaces/${ns}/volumesnapshots`;

export interface World {
  cluster: TestCluster;
  location: string;
  spec: BackupStorageLocationSpec;
  passwordSecret: string;
  namespace(prefix: string): Promise<string>;
  /** the repository of a source namespace, opened with ferry's engine */
  repository(namespace: string): Promise<Repository>;
  snapshotsOf(namespace: string): Promise<SnapshotEntry[]>;
  /** `restic check [--read-data]` on a namespace's repository */
  resticCheck(namespace: string, readData: boolean): Promise<string>;
}

/** Installs ferry and a storage location allowing `allowed(app)` namespaces; cleanup is the caller's `after`. */
export async function world(
  suite: string,
  allowedFor: (ns: { app: string; other: string }) => Partial<BackupStorageLocationSpec>,
): Promise<World & { app: string; other: string }> {
  const cluster = await useCluster(suite);
  await installFerry(cluster);
  const app = await cluster.namespace('app');
  const other = await cluster.namespace('other');
  const id = randomBytes(3).toString('hex');
  const location = `${suite}-${id}`;
  const passwordSecret = `ferry-password-${id}`;
  const spec: BackupStorageLocationSpec = {
    s3: {
      endpoint: cluster.s3.endpoint,
      bucket: cluster.s3.bucket,
      prefix: `e2e/${suite}-${id}`,
      region: cluster.s3.region,
    },
    credential: { name: `ferry-s3-${id}` },
    repositoryPassword: { name: passwordSecret, key: 'password' },
    allowedNamespaces: [app],
    ...allowedFor({ app, other }),
  };
  const { kube } = cluster;
  await kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: spec.credential.name },
    stringData: { AWS_ACCESS_KEY_ID: cluster.s3.accessKey, AWS_SECRET_ACCESS_KEY: cluster.s3.secretKey },
  });
  await kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: passwordSecret },
    stringData: { password: `secret of ${location}` },
  });
  await kube.create(`${api}/namespaces/${ferryNamespace}/backupstoragelocations`, {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupStorageLocation',
    metadata: { name: location },
    spec,
  });
  const s3 = {
    region: cluster.s3.region,
    credentials: { accessKeyId: cluster.s3.accessKey, secretAccessKey: cluster.s3.secretKey },
  };
  const repository = (ns: string) =>
    Repository.open(openBackend(repositoryLocation(spec, ns), { s3 }), repositoryPassword(`secret of ${location}`, ns));
  return {
    cluster,
    location,
    spec,
    passwordSecret,
    app,
    other,
    namespace: (prefix) => cluster.namespace(prefix),
    repository,
    async snapshotsOf(ns) {
      const repo = await repository(ns);
      try {
        return await listSnapshots(repo);
      } finally {
        await repo.close();
      }
    },
    resticCheck: (ns, readData) =>
      restic(
        {
          repo: repositoryLocation(spec, ns),
          password: repositoryPassword(`secret of ${location}`, ns),
          env: {
            AWS_ACCESS_KEY_ID: cluster.s3.accessKey,
            AWS_SECRET_ACCESS_KEY: cluster.s3.secretKey,
            AWS_DEFAULT_REGION: cluster.s3.region,
          },
        },
        ['check', ...(readData ? ['--read-data'] : [])],
      ),
  };
}

/** Has the transfer step report progress every `ms` (through the CronJob template the dispatcher copies at dispatch
 * time, as a GitOps edit would): the default 3 s can outlast a whole transfer of the test's data. */
export async function reportProgressEvery(cluster: TestCluster, ms: number): Promise<void> {
  for (const template of ['ferry-step-transfer-backup', 'ferry-step-transfer-restore']) {
    await cluster.kube.patch(
      `/apis/batch/v1/namespaces/${ferryNamespace}/cronjobs/${template}`,
      {
        spec: {
          jobTemplate: {
            spec: {
              template: {
                spec: { containers: [{ name: 'step', env: [{ name: 'FERRY_PROGRESS_MS', value: String(ms) }] }] },
              },
            },
          },
        },
      },
      'strategic',
    );
  }
}

/** A bound PVC on the immediate-binding class, and where its data lives on the host. */
export async function boundClaim(
  cluster: TestCluster,
  ns: string,
  name: string,
  size: string,
  block = false,
): Promise<{ pv: string; path: string }> {
  await cluster.kube.create(claims(ns), {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'ferry-local-immediate',
      volumeMode: block ? 'Block' : 'Filesystem',
      resources: { requests: { storage: size } },
    },
  });
  const pvc = await cluster.kube.waitFor(`${claims(ns)}/${name}`, `PVC ${ns}/${name} to bind`, (c) =>
    c.status?.phase === 'Bound' ? c : undefined,
  );
  return { pv: pvc.spec.volumeName, path: await volumePath(cluster, pvc.spec.volumeName) };
}

/** The host path of a PV of the box's storage driver. */
export async function volumePath(cluster: TestCluster, pv: string): Promise<string> {
  return volumeFile(await cluster.kube.get(`/api/v1/persistentvolumes/${pv}`));
}

export function dataUpload(name: string, location: string, spec: Partial<DataUpload['spec']> = {}): Obj {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name },
    spec: { sourcePVC: 'data', backupStorageLocation: location, ...spec },
  };
}

export function dataDownload(name: string, location: string, spec: Partial<DataDownload['spec']>): Obj {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataDownload',
    metadata: { name },
    spec: { targetPVC: { name: 'restored' }, backupStorageLocation: location, source: {}, ...spec },
  };
}

export interface Watched {
  final: Obj;
  /** every distinct (phase, progress) the resource showed, in order, with the time it was seen */
  seen: { at: number; phase: string; bytesDone?: number; totalBytes?: number; extra?: unknown }[];
}

/**
 * Polls a resource until it reaches one of `phases`, recording what it showed on the way; `look` adds whatever
 * else the test wants sampled at the same moments (e.g. the target PVC's phase).
 */
export async function watchUntil(
  cluster: Pick<TestCluster, 'kube'>,
  path: string,
  phases: string[],
  timeoutMs: number,
  look?: () => Promise<unknown>,
): Promise<Watched> {
  const deadline = Date.now() + timeoutMs;
  const seen: Watched['seen'] = [];
  for (;;) {
    const obj = await cluster.kube.get(path);
    const phase = obj.status?.phase ?? 'New';
    const extra = look ? await look() : undefined;
    const last = seen.at(-1);
    const entry = {
      at: Date.now(),
      phase,
      bytesDone: obj.status?.progress?.bytesDone,
      totalBytes: obj.status?.progress?.totalBytes,
      extra,
    };
    if (
      !last ||
      last.phase !== entry.phase ||
      last.bytesDone !== entry.bytesDone ||
      JSON.stringify(last.extra) !== JSON.stringify(extra)
    )
      seen.push(entry);
    if (phases.includes(phase)) return { final: obj, seen };
    if (Date.now() > deadline)
      throw new Error(
        `${path} did not reach ${phases.join('/')} within ${timeoutMs / 1000} s; it went through ${seen.map((s) => s.phase).join(' > ')}; last status: ${JSON.stringify(obj.status).slice(0, 1500)}`,
      );
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Creates DataUpload `name` of PVC `data` in `namespace` and waits for its end; throws unless it Completed. */
export async function completedBackup(
  w: Pick<World, 'cluster' | 'location'>,
  namespace: string,
  name: string,
  timeoutMs = 15 * 60_000,
): Promise<Obj> {
  await w.cluster.kube.create(uploads(namespace), dataUpload(name, w.location));
  const { final } = await watchUntil(
    w.cluster,
    `${uploads(namespace)}/${name}`,
    ['Completed', 'Failed', 'Canceled'],
    timeoutMs,
  );
  if (final.status.phase !== 'Completed')
    throw new Error(`DataUpload ${namespace}/${name} ended ${final.status.phase}: ${final.status.message}`);
  return final;
}

/** Bytes the repository's pack files take in storage. */
export async function packBytes(repo: Repository): Promise<number> {
  let total = 0;
  for await (const f of repo.backend.list('pack')) total += f.size;
  return total;
}

/** Objects ferry made for a resource that still exist: exposure objects in its namespace, contents, and Jobs still running. */
export async function leftovers(cluster: TestCluster, uid: string): Promise<string[]> {
  const selector = `?labelSelector=${encodeURIComponent(`${labels.uid}=${uid}`)}`;
  const found: string[] = [];
  const paths = [
    `${claims(ferryNamespace)}${selector}`,
    `${snapshots(ferryNamespace)}${selector}`,
    `/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents${selector}`,
  ];
  for (const path of paths) {
    for (const o of (await cluster.kube.get(path)).items)
      found.push(`${o.kind ?? path.split('?')[0].split('/').at(-1)} ${o.metadata.namespace ?? ''}/${o.metadata.name}`);
  }
  for (const job of (await cluster.kube.get(`/apis/batch/v1/namespaces/${ferryNamespace}/jobs${selector}`)).items) {
    if (
      !job.status?.completionTime &&
      !(job.status?.conditions ?? []).some((c: Obj) => c.type === 'Failed' && c.status === 'True')
    )
      found.push(`running Job ${job.metadata.name}`);
  }
  return found;
}

/** Waits until nothing is left (deletions take a moment to finish), or returns what stayed. */
export async function settledLeftovers(cluster: TestCluster, uid: string, timeoutMs = 30_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const left = await leftovers(cluster, uid);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** One line on how a finished resource went: its steps' durations and its transfer stats, for test diagnostics. */
export function summary(obj: Obj): string {
  const steps = Object.entries(obj.status?.steps ?? {}).map(
    ([name, r]: [string, any]) => `${name} ${((Date.parse(r.endTime) - Date.parse(r.startTime)) / 1000).toFixed(0)} s`,
  );
  const total = obj.status?.completionTimestamp
    ? ` in ${((Date.parse(obj.status.completionTimestamp) - Date.parse(obj.metadata.creationTimestamp)) / 1000).toFixed(0)} s`
    : '';
  return `${obj.kind} ${obj.metadata.name} ${obj.status?.phase}${total} (${steps.join(', ')}); stats ${JSON.stringify(obj.status?.stats ?? {})}`;
}

/** Host pids of the step processes whose argv ends with `tail` (containers' processes show in the host's /proc). */
export async function stepPids(...tail: string[]): Promise<number[]> {
  const wanted = `\0${tail.join('\0')}\0`;
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes('src/entry/step.ts') && cmdline.endsWith(wanted)) pids.push(Number(entry));
  }
  return pids;
}

/**
 * Stops (SIGSTOP) the transfer of `kind` `namespace/name`, which uses the repository of `source`, in the middle of its
 * work: once a lock is in that repository (a backup or restore takes one before it reads or writes), or, where it
 * takes none, once it reports bytes moved. Returns what resumes it (SIGCONT).
 */
export async function pauseTransfer(
  w: Pick<World, 'cluster' | 'repository'>,
  kind: 'DataUpload' | 'DataDownload',
  namespace: string,
  name: string,
  source: string,
): Promise<() => void> {
  const repo = await w.repository(source);
  const path = `${kind === 'DataUpload' ? uploads(namespace) : downloads(namespace)}/${name}`;
  try {
    for (const deadline = Date.now() + 10 * 60_000; Date.now() < deadline;) {
      const [pid] = await stepPids('transfer', `${kind}/${namespace}/${name}`);
      const obj = await w.cluster.kube.get(path);
      if (['Finalizing', 'Completed', 'Failed'].includes(obj.status?.phase))
        throw new Error(`the transfer of ${path} ended (${obj.status.phase}) before it could be paused`);
      let locked = false;
      for await (const _ of lockStore(repo).list()) locked = true;
      if (pid !== undefined && (locked || (obj.status?.progress?.bytesDone ?? 0) > 0)) {
        process.kill(pid, 'SIGSTOP');
        return () => process.kill(pid, 'SIGCONT');
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the transfer of ${path} did not start within 10 minutes`);
  } finally {
    await repo.close();
  }
}

const jobsOfFerry = `/apis/batch/v1/namespaces/${ferryNamespace}/jobs`;

export function jobEnded(job: Obj): boolean {
  return (job.status?.conditions ?? []).some(
    (c: Obj) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}

export function jobFailed(job: Obj): boolean {
  return (job.status?.conditions ?? []).some((c: Obj) => c.type === 'Failed' && c.status === 'True');
}

/** Waits for Job `name` in ferry's namespace to end. */
export function jobFinished(kube: Kube, name: string): Promise<Obj> {
  return kube.waitFor(
    `${jobsOfFerry}/${name}`,
    `Job ${name} to finish`,
    (j) => (jobEnded(j) ? j : undefined),
    10 * 60_000,
  );
}

/**
 * Runs Job `name` made from the jobTemplate of CronJob `cronJob` in ferry's namespace, with `env` added to its
 * container (what `kubectl create job --from=cronjob/...` does); waits for its end.
 */
export async function runCronJob(
  kube: Kube,
  cronJob: string,
  name: string,
  env: Record<string, string> = {},
): Promise<Obj> {
  const cron = await kube.waitFor(
    `/apis/batch/v1/namespaces/${ferryNamespace}/cronjobs/${cronJob}`,
    `CronJob ${cronJob}`,
    (c) => c,
    3 * 60_000,
  );
  const template = structuredClone(cron.spec.jobTemplate);
  const container = template.spec.template.spec.containers[0];
  container.env = [
    ...(container.env ?? []).filter((e: Obj) => !(e.name in env)),
    ...Object.entries(env).map(([n, value]) => ({ name: n, value })),
  ];
  await kube.create(jobsOfFerry, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      labels: template.metadata?.labels,
      annotations: { 'cronjob.kubernetes.io/instantiate': 'manual' },
    },
    spec: template.spec,
  });
  return jobFinished(kube, name);
}
