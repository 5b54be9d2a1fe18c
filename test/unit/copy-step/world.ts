// Two storage locations in one real MinIO (buckets site-a and site-b, each with its own repository password
// Secret), the in-memory Kube holding them, a DataUpload backed up for real into site-a's repository of its
// namespace, DataCopies, and a copy step context over all of it (engine: the real S3 backend, cheap scrypt).
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DataCopy } from '../../../src/shared/api/copy.ts';
import type { DataUpload } from '../../../src/shared/api/types.ts';
import { backup } from '../../../src/engine/operations/backup.ts';
import { openOrInit } from '../../../src/engine/operations/open.ts';
import { openBackend } from '../../../src/engine/operations/storage.ts';
import { issueText, validateFields } from '../../../src/shared/api/schemas.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { createLogger } from '../../../src/shared/kube/logger.ts';
import { repositoryAccess } from '../../../src/shared/location/access.ts';
import { repositoryLocation, repositoryPassword } from '../../../src/shared/location/repository.ts';
import type { CopyContext } from '../../../src/steps/copy/context.ts';
import { snapshotTags } from '../../../src/steps/data/tags.ts';
import type { Minio } from '../../support/minio.ts';
import { randomBytes, testKDF } from '../../support/repo.ts';
import type { ResticEnv } from '../../support/restic.ts';

export const ferryNamespace = 'ferry-system';
export const ns = 'app';
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A location named `name` in bucket `bucket`, with its own password Secret; `allowed` namespaces. */
export function location(minio: Minio, name: string, bucket: string, allowed = ['*'], endpoint = minio.endpoint) {
  return [
    {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name, namespace: ferryNamespace },
      spec: {
        s3: { endpoint, bucket, prefix: 'ferry', region: 'us-east-1' },
        credential: { name: 's3' },
        repositoryPassword: { name: `${name}-repo`, key: 'password' },
        allowedNamespaces: allowed,
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `${name}-repo`, namespace: ferryNamespace },
      data: { password: b64(`secret of ${name}`) },
    },
  ] as KubeObject[];
}

export function credentials(minio: Minio): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's3', namespace: ferryNamespace },
    data: { AWS_ACCESS_KEY_ID: b64(minio.accessKey), AWS_SECRET_ACCESS_KEY: b64(minio.secretKey) },
  };
}

/** restic's view of a location's repository for `ns`, with that location's derived password. */
export function resticOf(minio: Minio, name: string, bucket: string): ResticEnv {
  const spec = location(minio, name, bucket)[0].spec as never;
  return {
    repo: repositoryLocation(spec, ns),
    password: repositoryPassword(`secret of ${name}`, ns),
    env: {
      AWS_ACCESS_KEY_ID: minio.accessKey,
      AWS_SECRET_ACCESS_KEY: minio.secretKey,
      AWS_DEFAULT_REGION: 'us-east-1',
    },
  };
}

export interface World {
  kube: MemoryKube;
  ctx: CopyContext;
  logs: string[];
  clock: { ms: number };
}

export function world(minio: Minio, objects: KubeObject[], attempt = 1): World {
  const kube = new MemoryKube();
  const clock = { ms: Date.parse('2026-03-01T12:00:00Z') };
  kube.now = () => new Date(clock.ms);
  kube.seed(credentials(minio), ...objects);
  // every status the step writes must pass the schema the dispatcher and the CRDs enforce
  for (const kind of ['DataCopy', 'DataUpload'] as const) {
    for (const verb of ['replaceStatus', 'patch'] as const) {
      kube.on(verb, kind, (o) => {
        const issues = validateFields(kind, 'status', o.status);
        if (issues.length > 0) throw new Error(`invalid ${kind} status written: ${issues.map(issueText).join('; ')}`);
      });
    }
  }
  const logs: string[] = [];
  const ctx: CopyContext = {
    kube,
    log: createLogger({ step: 'copy' }, { write: (l) => logs.push(l) }),
    ferryNamespace,
    settings: {
      podName: `ferry-copy-abc-a${attempt}-x7k2p`,
      jobName: `ferry-copy-abc-a${attempt}`,
      attempt,
      volumePath: '/nonexistent',
      devicePath: '/nonexistent',
      phaseWaitMs: 1000,
      pollMs: 50,
      progressMs: 10,
      lockWaitMs: 1000,
    },
    // one quick retry: a test of an unreachable location does not wait out the production backoff
    engine: {
      openBackend: (loc, opts) => openBackend(loc, { ...opts, retry: { attempts: 2, initialDelayMs: 10 } }),
      init: { kdf: testKDF },
    },
    signal: new AbortController().signal,
    startedAt: new Date(clock.ms),
    now: () => new Date(clock.ms),
    sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 20))),
  };
  return { kube, ctx, logs, clock };
}

let uid = 0;

/**
 * A Completed DataUpload in `locationName` whose snapshot was really written there: `files` (name -> size, content
 * seeded by name) backed up from a scratch directory with the tags a transfer gives it.
 */
export async function backedUp(
  w: World,
  name: string,
  locationName: string,
  files: Record<string, number>,
): Promise<DataUpload & KubeObject> {
  const du: DataUpload & KubeObject = {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name, namespace: ns, uid: `0b7c7a2e-1111-4c3e-9f00-${String(++uid).padStart(12, '0')}` },
    spec: { sourcePVC: 'data', backupStorageLocation: locationName },
  };
  const dir = await mkdtemp(join(tmpdir(), 'ferry-copy-src-'));
  try {
    for (const [file, size] of Object.entries(files))
      await writeFile(
        join(dir, file),
        randomBytes(
          size,
          [...file].reduce((a, c) => a * 31 + c.charCodeAt(0), 7),
        ),
      );
    const access = await repositoryAccess(w.kube, ferryNamespace, locationName, ns);
    const backend = openBackend(access.location, access.open);
    try {
      const repo = await openOrInit(backend, access.password, { kdf: testKDF, ...access.identity });
      const result = await backup(repo, { paths: [dir], tags: snapshotTags(du), hostname: 'ferry' });
      du.status = { phase: 'Completed', snapshotID: result.snapshotID, completionTimestamp: '2026-03-01T11:00:00Z' };
    } finally {
      await backend.close();
      access.dispose();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  w.kube.seed(du);
  return (await w.kube.get<DataUpload & KubeObject>({ kind: 'DataUpload', namespace: ns, name }))!;
}

export function dataCopy(name: string, dataUpload: string, destination: string): DataCopy & KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataCopy',
    metadata: { name, namespace: ns, uid: `dc0c0c0c-2222-4c3e-9f00-${String(++uid).padStart(12, '0')}` },
    spec: { dataUpload, backupStorageLocation: destination },
  };
}
