// What the second-site suite stands on: the box's two clusters with ferry installed on each, a namespace of the same
// name on both, and storage locations: `primary` on site A's MinIO, and on site B's MinIO `copies` (known to both
// clusters, with the same repository password secret, so both derive the same keys) and whatever a test adds.
// Site B's MinIO counts the bytes it receives, as an operator's Prometheus reads them.
import { randomBytes } from 'node:crypto';
import {
  DeleteObjectCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import type { BackupStorageLocationSpec } from '../../src/shared/api/types.ts';
import { openBackend } from '../../src/engine/backend/open.ts';
import { repositoryLocation, repositoryPassword } from '../../src/shared/location/repository.ts';
import { Lock } from '../../src/engine/lock/lock.ts';
import { lockStore } from '../../src/engine/repository/lock-store.ts';
import { Repository } from '../../src/engine/repository/repository.ts';
import { listSnapshots } from '../../src/engine/repository/snapshots.ts';
import type { SnapshotEntry } from '../../src/engine/snapshot/select.ts';
import type { Kube } from '../cluster/kube.ts';
import { until } from '../cluster/testing.ts';
import { useCluster, useSecondSite } from '../support/cluster.ts';
import type { S3Settings, SecondSiteCluster, TestCluster } from '../support/cluster.ts';
import { ferryNamespace, installFerry } from '../support/ferry-install.ts';
import { restic } from '../support/restic.ts';
import { api } from './world.ts';

export interface SiteAccess {
  kube: Kube;
  kubeconfig: string;
}

export type LockedS3 = BackupStorageLocationSpec['s3'] & { prefix: string };

export interface TwoSites {
  a: TestCluster;
  b: SecondSiteCluster;
  /** the application namespace, on both sites */
  ns: string;
  id: string;
  /** on site A's MinIO */
  primary: string;
  /** on site B's MinIO, the same location on both clusters */
  copies: string;
  /** Adds a location on site B's MinIO (prefix of its own) to the given sites; returns its spec. */
  addCopyLocation(
    name: string,
    sites: SiteAccess[],
    spec?: Partial<BackupStorageLocationSpec>,
  ): Promise<BackupStorageLocationSpec>;
  /**
   * Holds an exclusive lock on the namespace's repository in `primary` (as another tool would), so a step that reads
   * it waits; returns what releases it.
   */
  holdPrimaryLock(): Promise<() => Promise<void>>;
  /** Where a location named `name` keeps its repositories in site B's Object Lock bucket. */
  lockedS3(name: string): LockedS3;
  /**
   * What an attacker holding site B's keys does to everything under `prefix` in the Object Lock bucket: overwrites
   * every pack, deletes every object, and tries to delete one version for good (the error it got).
   */
  attackLocked(prefix: string): Promise<{ overwritten: number; deleted: number; versionDelete: string }>;
  /** Current objects under `prefix` in a bucket of site B's MinIO, with their sizes. */
  objectsInB(bucket: string, prefix: string): Promise<{ key: string; size: number }[]>;
  /** Every stored version (not delete markers) under `prefix` in the Object Lock bucket. */
  lockedVersions(prefix: string): Promise<{ key: string; version: string }[]>;
  /**
   * Bytes site B's MinIO has received since it started, read once what it serves is current: MinIO refreshes its
   * metrics at most every 10 s, so this waits that long after the traffic of interest.
   */
  receivedByB(): Promise<number>;
  /** The namespace's repository in a location on site B's MinIO, opened with ferry's engine. */
  snapshotsInB(location: string): Promise<SnapshotEntry[]>;
  /** `restic check [--read-data]` of the namespace's repository in a location on site B's MinIO. */
  resticCheckInB(location: string, readData: boolean): Promise<string>;
  cleanup(): Promise<void>;
}

export async function twoSites(suite: string): Promise<TwoSites> {
  const a = await useCluster(suite);
  const b = await useSecondSite();
  await Promise.all([installFerry(a), installFerry(b)]);
  const ns = await a.namespace('app');
  await b.kube.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await b.kube.waitFor(`/api/v1/namespaces/${ns}/serviceaccounts/default`, 'the default ServiceAccount', () => true);
  // an install that changed CRDs leaves their storage re-initializing for a moment (429 to lists)
  for (const site of [a, b])
    for (const plural of ['datauploads', 'datadownloads', 'datacopies'])
      await until(`${plural} to be served`, 60_000, async () =>
        (await site.kube.get(`${api}/namespaces/${ns}/${plural}`).catch(() => undefined)) ? true : undefined,
      );
  const id = randomBytes(3).toString('hex');
  const secrets = { a: `s3-a-${id}`, b: `s3-b-${id}`, passwordA: `pw-a-${id}`, passwordB: `pw-b-${id}` };
  const password = (secret: string): string => `${secret} of the suite ${suite}`;
  const secret = (kube: Kube, name: string, data: Record<string, string>): Promise<unknown> =>
    kube.create(`/api/v1/namespaces/${ferryNamespace}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name },
      stringData: data,
    });
  const keys = (s3: S3Settings): Record<string, string> => ({
    AWS_ACCESS_KEY_ID: s3.accessKey,
    AWS_SECRET_ACCESS_KEY: s3.secretKey,
  });
  await secret(a.kube, secrets.a, keys(a.s3));
  await secret(a.kube, secrets.passwordA, { password: password(secrets.passwordA) });
  for (const kube of [a.kube, b.kube]) {
    await secret(kube, secrets.b, keys(b.s3));
    await secret(kube, secrets.passwordB, { password: password(secrets.passwordB) });
  }
  const createLocation = (kube: Kube, name: string, spec: BackupStorageLocationSpec): Promise<unknown> =>
    kube.create(`${api}/namespaces/${ferryNamespace}/backupstoragelocations`, {
      apiVersion: 'ferry.dev/v1alpha1',
      kind: 'BackupStorageLocation',
      metadata: { name },
      spec,
    });
  const primary = `primary-${id}`;
  const primarySpec: BackupStorageLocationSpec = {
    s3: { endpoint: a.s3.endpoint, bucket: a.s3.bucket, prefix: `e2e/${suite}-${id}`, region: a.s3.region },
    credential: { name: secrets.a },
    repositoryPassword: { name: secrets.passwordA, key: 'password' },
    allowedNamespaces: [ns],
  };
  await createLocation(a.kube, primary, primarySpec);
  const specs = new Map<string, BackupStorageLocationSpec>();
  const addCopyLocation: TwoSites['addCopyLocation'] = async (name, sites, extra = {}) => {
    const spec: BackupStorageLocationSpec = {
      s3: { endpoint: b.s3.endpoint, bucket: b.s3.bucket, prefix: `${suite}/${name}`, region: b.s3.region },
      credential: { name: secrets.b },
      repositoryPassword: { name: secrets.passwordB, key: 'password' },
      allowedNamespaces: [ns],
      ...extra,
    };
    for (const site of sites) await createLocation(site.kube, name, spec);
    specs.set(name, spec);
    return spec;
  };
  const copies = `copies-${id}`;
  await addCopyLocation(copies, [a, b]);
  const inB = (location: string): { repo: string; password: string } => {
    const spec = specs.get(location);
    if (!spec) throw new Error(`no location ${location} on site B's MinIO`);
    return { repo: repositoryLocation(spec, ns), password: repositoryPassword(password(secrets.passwordB), ns) };
  };
  const s3B = {
    region: b.s3.region,
    credentials: { accessKeyId: b.s3.accessKey, secretAccessKey: b.s3.secretKey },
  };
  const client = new S3Client({ ...s3B, endpoint: b.s3.endpoint, forcePathStyle: true });
  return {
    a,
    b,
    ns,
    id,
    primary,
    copies,
    addCopyLocation,
    async holdPrimaryLock() {
      const s3A = {
        region: a.s3.region,
        credentials: { accessKeyId: a.s3.accessKey, secretAccessKey: a.s3.secretKey },
      };
      const repo = await Repository.open(
        openBackend(repositoryLocation(primarySpec, ns), { s3: s3A }),
        repositoryPassword(password(secrets.passwordA), ns),
      );
      const lock = await Lock.acquire(lockStore(repo), { exclusive: true });
      return async () => {
        await lock.release();
        await repo.close();
      };
    },
    lockedS3: (name) => ({
      endpoint: b.s3.endpoint,
      bucket: b.s3.lockedBucket,
      prefix: `${suite}/${name}`,
      region: b.s3.region,
    }),
    attackLocked: (prefix) => attack(client, b.s3.lockedBucket, prefix),
    objectsInB: (bucket, prefix) => currentObjects(client, bucket, prefix),
    lockedVersions: (prefix) => versions(client, b.s3.lockedBucket, prefix),
    async receivedByB() {
      await new Promise((r) => setTimeout(r, 10_500));
      const text = await (await fetch(`${b.s3.endpoint}/minio/v2/metrics/cluster`)).text();
      const line = text.split('\n').find((l) => l.startsWith('minio_s3_traffic_received_bytes{'));
      if (!line) throw new Error("site B's MinIO reports no minio_s3_traffic_received_bytes");
      return Number(line.split(' ').at(-1));
    },
    async snapshotsInB(location) {
      const { repo, password: pw } = inB(location);
      const opened = await Repository.open(openBackend(repo, { s3: s3B }), pw);
      try {
        return await listSnapshots(opened);
      } finally {
        await opened.close();
      }
    },
    resticCheckInB(location, readData) {
      const { repo, password: pw } = inB(location);
      return restic(
        {
          repo,
          password: pw,
          env: { ...keys(b.s3), AWS_DEFAULT_REGION: b.s3.region },
        },
        ['check', ...(readData ? ['--read-data'] : [])],
      );
    },
    async cleanup() {
      client.destroy();
      await b.kube.delete(`/api/v1/namespaces/${ns}`).catch(() => undefined);
      b.close();
      await a.cleanup();
    },
  };
}

async function currentObjects(
  client: S3Client,
  bucket: string,
  prefix: string,
): Promise<{ key: string; size: number }[]> {
  const keys: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }),
    );
    keys.push(...(page.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size ?? 0 })));
    token = page.NextContinuationToken;
  } while (token);
  return keys;
}

async function versions(client: S3Client, bucket: string, prefix: string): Promise<{ key: string; version: string }[]> {
  const out: { key: string; version: string }[] = [];
  let keyMarker: string | undefined;
  let versionMarker: string | undefined;
  for (;;) {
    const page = await client.send(
      new ListObjectVersionsCommand({
        Bucket: bucket,
        Prefix: prefix,
        KeyMarker: keyMarker,
        VersionIdMarker: versionMarker,
      }),
    );
    out.push(...(page.Versions ?? []).map((v) => ({ key: v.Key!, version: v.VersionId! })));
    if (!page.IsTruncated) return out;
    keyMarker = page.NextKeyMarker;
    versionMarker = page.NextVersionIdMarker;
  }
}

async function attack(
  client: S3Client,
  bucket: string,
  prefix: string,
): Promise<{ overwritten: number; deleted: number; versionDelete: string }> {
  const keys = (await currentObjects(client, bucket, prefix)).map((o) => o.key);
  const packs = keys.filter((k) => /\/data\/[0-9a-f]{2}\//.test(k));
  for (const key of packs)
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: randomBytes(4096) }));
  // the version ferry wrote, under the one the overwrite put on top (newest first)
  const original = (await versions(client, bucket, packs[0] ?? prefix)).at(-1)!;
  const versionDelete = await client
    .send(new DeleteObjectCommand({ Bucket: bucket, Key: original.key, VersionId: original.version }))
    .then(
      () => 'deleted',
      (err: Error) => `${err.name}: ${err.message}`,
    );
  for (const key of keys) await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  return { overwritten: packs.length, deleted: keys.length, versionDelete };
}
