// A small cluster for dispatcher tests: ferry's namespace with a location and the real Job templates from jobs/,
// an application namespace with a bound and a pending PVC, plus builders for resources and admission reviews.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { AdmissionReview } from '../../../src/dispatcher/admission.ts';
import { Dispatcher } from '../../../src/dispatcher/dispatcher.ts';
import type { DispatcherDeps } from '../../../src/dispatcher/dispatcher.ts';
import type { Resource } from '../../../src/shared/dispatch/status.ts';
import type { HandlerDeps } from '../../../src/dispatcher/handler.ts';
import { DispatcherMetrics } from '../../../src/dispatcher/metrics.ts';
import { StoredChanges } from '../../../src/dispatcher/stored.ts';
import type { DataDownload, DataUpload, Phase } from '../../../src/shared/api/types.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { createLogger } from '../../../src/shared/kube/logger.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';

export const ferryNamespace = 'ferry-system';
const jobsDir = join(import.meta.dirname, '..', '..', '..', 'jobs');

export function templates(): KubeObject[] {
  return ['snapshot', 'expose', 'transfer-backup', 'transfer-restore', 'finalize', 'delete'].map(
    (file) => yaml.load(readFileSync(join(jobsDir, `${file}.yaml`), 'utf8')) as KubeObject,
  );
}

export function location(name = 'default', allowed = ['app', 'other']): KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupStorageLocation',
    metadata: { name, namespace: ferryNamespace },
    spec: {
      s3: { endpoint: 'http://127.0.0.1:9000', bucket: 'ferry' },
      credential: { name: 's3' },
      repositoryPassword: { name: 'repo', key: 'password' },
      allowedNamespaces: allowed,
      crossNamespaceRestores: [{ from: 'app', to: ['other'] }],
    },
  };
}

export function claim(namespace: string, name: string, phase = 'Bound', volumeMode = 'Filesystem'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace },
    spec: { volumeMode },
    status: { phase },
  };
}

let counter = 0;

/** Distinct in the first 16 hex digits, which Job names keep (as random UUIDs are). */
function uidFor(n: number, kind: string): string {
  return `${kind}${n.toString(16).padStart(7, '0')}-0000-4000-8000-000000000000`;
}

/** A stored-looking DataUpload: uid and creation time set, in `phase`. */
export function upload(
  name: string,
  phase?: Phase,
  extra: Partial<DataUpload> = {},
  created = '2025-01-01T00:00:00Z',
): Resource {
  counter++;
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name, namespace: 'app', uid: uidFor(counter, '0'), creationTimestamp: created, resourceVersion: '1' },
    spec: { sourcePVC: 'data', backupStorageLocation: 'default' },
    ...(phase ? { status: { phase } } : {}),
    ...extra,
  } as Resource;
}

export function download(name: string, phase?: Phase, extra: Partial<DataDownload> = {}): Resource {
  counter++;
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataDownload',
    metadata: {
      name,
      namespace: 'other',
      uid: uidFor(counter, '1'),
      creationTimestamp: '2025-01-01T00:00:00Z',
      resourceVersion: '1',
    },
    spec: {
      targetPVC: { name: 'restored' },
      backupStorageLocation: 'default',
      source: { snapshotID: 'abcdef0123456789' },
      sourceNamespace: 'app',
    },
    ...(phase ? { status: { phase } } : {}),
    ...extra,
  } as Resource;
}

export function review(
  operation: 'CREATE' | 'UPDATE' | 'DELETE',
  object: unknown,
  opts: { old?: unknown; subResource?: string; dryRun?: boolean } = {},
): AdmissionReview {
  const obj = (operation === 'DELETE' ? opts.old : object) as
    { kind?: string; metadata?: { name?: string; namespace?: string } } | undefined;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `req-${++counter}`,
      kind: { group: 'ferry.dev', version: 'v1alpha1', kind: obj?.kind ?? 'DataUpload' },
      resource: {
        group: 'ferry.dev',
        version: 'v1alpha1',
        resource: obj?.kind === 'DataDownload' ? 'datadownloads' : 'datauploads',
      },
      subResource: opts.subResource,
      name: obj?.metadata?.name,
      namespace: obj?.metadata?.namespace,
      operation,
      object: operation === 'DELETE' ? null : object,
      oldObject: opts.old ?? null,
      dryRun: opts.dryRun ?? false,
    },
  };
}

export interface World {
  kube: MemoryKube;
  dispatcher: Dispatcher;
  handler: HandlerDeps;
  metrics: DispatcherMetrics;
  /**
   * Waits until the dispatcher has acted on every change it allowed, once the test stored it as the apiserver would
   * after the answer; a change never stored (a forged review) is given up after a short timeout.
   */
  settle(): Promise<void>;
  logs: string[];
}

export function world(opts: Partial<Pick<DispatcherDeps, 'limits' | 'maxAttempts' | 'nodes' | 'now'>> = {}): World {
  const kube = new MemoryKube();
  kube.seed(location(), claim('app', 'data'), claim('app', 'pending', 'Pending'), ...templates());
  const logs: string[] = [];
  const log = createLogger({}, { write: (line) => logs.push(line) });
  const metrics = new DispatcherMetrics();
  const dispatcher = new Dispatcher({
    kube,
    namespace: ferryNamespace,
    limits: { cluster: 0, perNode: 0 },
    maxAttempts: 3,
    nodes: async () =>
      ['node-1', 'node-2'].map((name) => ({ name, labels: { 'kubernetes.io/hostname': name }, usable: true })),
    log,
    metrics,
    instance: 'test',
    ...opts,
  });
  const changes = new StoredChanges(kube, { timeoutMs: 300, firstReadMs: 1 });
  return {
    kube,
    dispatcher,
    metrics,
    logs,
    handler: { kube, namespace: ferryNamespace, dispatcher, changes, metrics, log, budgetMs: 2000 },
    settle: () => changes.idle(),
  };
}

export function jobs(kube: MemoryKube): KubeObject[] {
  return kube.all('Job');
}

/** Marks a Job finished as the Job controller would. */
export function finishJob(
  kube: MemoryKube,
  name: string,
  outcome: 'Complete' | 'Failed',
  at = '2025-01-01T00:00:00Z',
  message = '',
): void {
  kube.mutate({ kind: 'Job', namespace: ferryNamespace, name }, (job) => {
    job.status = {
      conditions: [
        {
          type: outcome,
          status: 'True',
          reason: outcome === 'Failed' ? 'BackoffLimitExceeded' : 'Completed',
          message,
          lastTransitionTime: at,
        },
      ],
    };
  });
}
