// Everything the engine needs to open a resource's repository, read from its BackupStorageLocation (in ferry's
// namespace) and the two Secrets it names: the location string, the derived password, and S3 settings (endpoint,
// region, path style, credentials, private CA). In a step's pod the Secrets are mounted files (mounted-secrets.ts):
// no step account may read Secrets; the CLI, run by a person, reads them through the API.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { BackupStorageLocation } from '../api/types.ts';
import type { OpenOptions } from '../../engine/operations/storage.ts';
import type { Kube, KubeObject } from '../kube/kube.ts';
import { LocationError } from './errors.ts';
import { mountedSecretPath } from './mounted-secrets.ts';
import { objectLockSettings, type RepositoryUse } from './object-lock.ts';
import { repositoryIdentity, repositoryLocation, repositoryPassword, type RepositoryIdentity } from './repository.ts';

export { LocationError };

export interface RepositoryAccess {
  location: string;
  password: string;
  /** what the repository is created with when it does not exist yet */
  identity: RepositoryIdentity;
  open: OpenOptions;
  /** removes the CA file written for the S3 client, if any */
  dispose(): void;
}

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

export async function readLocation(kube: Kube, ferryNamespace: string, name: string): Promise<BackupStorageLocation> {
  const bsl = await kube.get<BackupStorageLocation & KubeObject>({
    kind: 'BackupStorageLocation',
    namespace: ferryNamespace,
    name,
  });
  if (!bsl) throw new LocationError(`BackupStorageLocation "${name}" does not exist in namespace ${ferryNamespace}.`);
  return bsl;
}

async function secretValue(kube: Kube, namespace: string, name: string, key: string, what: string): Promise<Buffer> {
  const mounted = mountedSecretPath(name, key);
  if (existsSync(mounted)) return readFileSync(mounted);
  const folder = dirname(mounted);
  if (existsSync(folder)) {
    // mounted as an optional volume: an empty one means the Secret does not exist (the kubelet's own entries start
    // with "..")
    const keys = readdirSync(folder).filter((entry) => !entry.startsWith('..'));
    if (keys.length === 0)
      throw new LocationError(`The ${what} Secret "${name}" does not exist in namespace ${namespace}.`);
    throw new LocationError(`The ${what} Secret "${name}" has no key "${key}" (it has ${keys.sort().join(', ')}).`);
  }
  const secret = await kube.get<Secret>({ kind: 'Secret', namespace, name }).catch((err: unknown) => {
    if ((err as { status?: number }).status !== 403) throw err;
    throw new LocationError(
      `The ${what} Secret "${name}" is neither mounted at ${mounted} nor readable by this account: ferry's steps read a location's Secrets only from the volumes their Job mounts (a Job made by the dispatcher or a location's maintenance CronJob has them).`,
    );
  });
  if (!secret) throw new LocationError(`The ${what} Secret "${name}" does not exist in namespace ${namespace}.`);
  const b64 = secret.data?.[key];
  if (b64 === undefined) throw new LocationError(`The ${what} Secret "${name}" has no key "${key}".`);
  return Buffer.from(b64, 'base64');
}

/** How to reach a location's bucket: its S3 settings with the credentials from its Secret. */
export interface S3Access {
  s3: NonNullable<OpenOptions['s3']>;
  /** removes the CA file written for the S3 client, if any */
  dispose(): void;
}

export async function s3Access(kube: Kube, ferryNamespace: string, bsl: BackupStorageLocation): Promise<S3Access> {
  const { spec } = bsl;
  const cred = spec.credential;
  const accessKeyId = await secretValue(
    kube,
    ferryNamespace,
    cred.name,
    cred.accessKeyIDKey ?? 'AWS_ACCESS_KEY_ID',
    'credentials',
  );
  const secretAccessKey = await secretValue(
    kube,
    ferryNamespace,
    cred.name,
    cred.secretAccessKeyKey ?? 'AWS_SECRET_ACCESS_KEY',
    'credentials',
  );
  // the S3 client takes its CA from a file; a private one lives only as long as this access
  let caDir: string | undefined;
  let caFile: string | undefined;
  if (spec.s3.caBundle) {
    caDir = mkdtempSync(join(tmpdir(), 'ferry-ca-'));
    caFile = join(caDir, 'ca.pem');
    writeFileSync(caFile, Buffer.from(spec.s3.caBundle, 'base64'), { mode: 0o600 });
  }
  return {
    s3: {
      region: spec.s3.region,
      pathStyle: spec.s3.forcePathStyle ?? true,
      caFile,
      credentials: {
        accessKeyId: accessKeyId.toString('utf8').trim(),
        secretAccessKey: secretAccessKey.toString('utf8').trim(),
      },
    },
    dispose: () => {
      if (caDir) rmSync(caDir, { recursive: true, force: true });
    },
  };
}

/**
 * The repository of `sourceNamespace` at location `name`, ready for openBackend + Repository.open, opened as the
 * location says: with its Object Lock policy, or (for `use` read only) reading what its object versions hold.
 */
export async function repositoryAccess(
  kube: Kube,
  ferryNamespace: string,
  name: string,
  sourceNamespace: string,
  use: RepositoryUse = 'write',
): Promise<RepositoryAccess> {
  const bsl = await readLocation(kube, ferryNamespace, name);
  const { spec } = bsl;
  const location = repositoryLocation(spec, sourceNamespace);
  const lock = objectLockSettings(bsl, use);
  const access = await s3Access(kube, ferryNamespace, bsl);
  let secret: Buffer;
  try {
    secret = await secretValue(
      kube,
      ferryNamespace,
      spec.repositoryPassword.name,
      spec.repositoryPassword.key,
      'repository password',
    );
  } catch (err) {
    access.dispose();
    throw err;
  }
  return {
    location,
    password: repositoryPassword(secret, sourceNamespace),
    identity: repositoryIdentity(secret, sourceNamespace),
    open: { s3: { ...access.s3, ...lock } },
    dispose: access.dispose,
  };
}

/** The location's repository password Secret holds a non-empty value under its key. */
export async function checkPasswordSecret(
  kube: Kube,
  ferryNamespace: string,
  bsl: BackupStorageLocation,
): Promise<void> {
  const secret = await secretValue(
    kube,
    ferryNamespace,
    bsl.spec.repositoryPassword.name,
    bsl.spec.repositoryPassword.key,
    'repository password',
  );
  if (secret.length === 0)
    throw new LocationError(
      `The repository password Secret "${bsl.spec.repositoryPassword.name}" holds an empty "${bsl.spec.repositoryPassword.key}".`,
    );
}
