// A step context over the in-memory Kube with a fake clock: sleeping advances the clock at once, so waits and
// timeouts take no real time. Logs are kept for assertions.
import type { DataDownload, DataUpload, StepName } from '../../../src/shared/api/types.ts';
import { issueText, validateFields } from '../../../src/shared/api/schemas.ts';
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import type { Backend } from '../../../src/engine/backend/backend.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { createLogger } from '../../../src/shared/kube/logger.ts';
import type { StepContext, StepSettings } from '../../../src/steps/context.ts';
import { testKDF, testPolynomial } from '../../support/repo.ts';

export const ferryNamespace = 'ferry-system';

export interface Harness {
  kube: MemoryKube;
  ctx: StepContext;
  logs: string[];
  clock: { ms: number };
  backends: Map<string, Backend>;
}

export function harness(step: StepName, settings: Partial<StepSettings> = {}, kube = new MemoryKube()): Harness {
  const clock = { ms: Date.parse('2026-03-01T12:00:00Z') };
  const logs: string[] = [];
  const backends = new Map<string, Backend>();
  kube.now = () => new Date(clock.ms);
  // every status a step writes must pass the schema the dispatcher and the CRDs enforce
  for (const kind of ['DataUpload', 'DataDownload'] as const) {
    for (const verb of ['replaceStatus', 'patch'] as const) {
      kube.on(verb, kind, (o) => {
        const issues = validateFields(kind, 'status', o.status);
        if (issues.length > 0) throw new Error(`invalid ${kind} status written: ${issues.map(issueText).join('; ')}`);
      });
    }
  }
  const ctx: StepContext = {
    step,
    kube,
    log: createLogger({ step }, { write: (l) => logs.push(l) }),
    ferryNamespace,
    sweep: false,
    settings: {
      podName: `ferry-up-abc-${step}-1-x7k2p`,
      jobName: `ferry-up-abc-${step}-1`,
      nodeName: 'node-1',
      volumePath: '/nonexistent/volume',
      devicePath: '/nonexistent/device',
      phaseWaitMs: 3000,
      pollMs: 1000,
      progressMs: 50,
      lockWaitMs: 1000,
      ...settings,
    },
    engine: {
      // one in-memory bucket per repository location, shared by every step of a test
      openBackend: (location) => {
        let b = backends.get(location);
        if (!b) backends.set(location, (b = new MemBackend()));
        return b;
      },
      init: { kdf: testKDF, polynomial: testPolynomial },
    },
    signal: new AbortController().signal,
    startedAt: new Date(clock.ms),
    now: () => new Date(clock.ms),
    sleep: async (ms) => {
      clock.ms += ms;
      await new Promise((r) => setImmediate(r));
    },
  };
  return { kube, ctx, logs, clock, backends };
}

export function dataUpload(
  over: Partial<DataUpload['spec']> = {},
  status?: DataUpload['status'],
): DataUpload & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name: 'du-1', namespace: 'app', uid: '0b7c7a2e-1111-4c3e-9f00-000000000001' },
    spec: { sourcePVC: 'data', backupStorageLocation: 'default', ...over },
    ...(status ? { status } : {}),
  };
}

export function dataDownload(
  over: Partial<DataDownload['spec']> = {},
  status?: DataDownload['status'],
): DataDownload & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataDownload',
    metadata: { name: 'dd-1', namespace: 'restore', uid: '5a5a5a5a-2222-4c3e-9f00-000000000002' },
    spec: { targetPVC: { name: 'data-copy' }, backupStorageLocation: 'default', source: { snapshotID: 'ab' }, ...over },
    ...(status ? { status } : {}),
  };
}

export function pvc(
  namespace: string,
  name: string,
  spec: Record<string, unknown> = {},
  status?: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'fast',
      resources: { requests: { storage: '1Gi' } },
      ...spec,
    },
    ...(status ? { status } : {}),
  };
}

/** The storage location, its two Secrets, in ferry's namespace. */
export function location(allowed: string[] = ['*']): KubeObject[] {
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  return [
    {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name: 'default', namespace: ferryNamespace },
      spec: {
        s3: { endpoint: 'http://127.0.0.1:9', bucket: 'ferry', prefix: 'test' },
        credential: { name: 's3' },
        repositoryPassword: { name: 'repo', key: 'password' },
        allowedNamespaces: allowed,
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's3', namespace: ferryNamespace },
      data: { AWS_ACCESS_KEY_ID: b64('id'), AWS_SECRET_ACCESS_KEY: b64('key') },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'repo', namespace: ferryNamespace },
      data: { password: b64('location secret') },
    },
  ];
}

export function eventsOf(kube: MemoryKube): { reason: string; type: string; note: string }[] {
  return kube.all('Event').map((e) => ({ reason: e.reason as string, type: e.type as string, note: e.note as string }));
}
