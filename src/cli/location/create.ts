// `ferry location create NAME`: a BackupStorageLocation and, when given the values, its two Secrets (S3 credentials
// and the repository password), written only after the bucket answered with those credentials. Secret values come
// from files or the environment, never from the command line, and are never printed.
import { readFile } from 'node:fs/promises';
import { defineCommand } from 'citty';
import { fitted, labelValue, maxObjectName } from '../../shared/kube/names.ts';
import { consola } from '../console.ts';
import type { BackupStorageLocationSpec } from '../../shared/api/types.ts';
import { apiVersion } from '../../shared/api/types.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { recordCheck, type StoredLocation } from '../../shared/location/check.ts';
import { probeLocation } from '../../shared/location/probe.ts';
import { withKube } from '../resource/kube.ts';
import { objectName } from '../resource/names.ts';
import { isDocument, outputArgs, outputFormat, printDocument } from '../resource/output.ts';
import { UsageError } from '../run.ts';
import { crossNamespaceRestores } from './cross-namespace.ts';
import { fixInFlags } from './fixes.ts';
import { locationKubeArgs } from './flags.ts';

const args = {
  name: { type: 'positional', required: true, description: 'the location', valueHint: 'NAME' },
  endpoint: { type: 'string', description: 'S3 endpoint, http(s)://HOST[:PORT]', valueHint: 'URL' },
  bucket: { type: 'string', description: 'bucket (it must exist)', valueHint: 'BUCKET' },
  prefix: { type: 'string', description: 'key prefix; repositories live at PREFIX/<namespace>', valueHint: 'PREFIX' },
  region: { type: 'string', description: 'S3 region', valueHint: 'REGION' },
  'path-style': {
    type: 'boolean',
    description: 'bucket in the path, as MinIO and Ceph want (--no-path-style: in the host name)',
    default: true,
  },
  cacert: {
    type: 'string',
    description: 'PEM file with the CA that signed the endpoint certificate',
    valueHint: 'FILE',
  },
  'allowed-namespaces': {
    type: 'string',
    description: "namespaces whose PVCs may be backed up here, comma-separated, or '*' for all",
    valueHint: 'NS,...',
  },
  'access-key': { type: 'string', description: 'S3 access key ID (default: env AWS_ACCESS_KEY_ID)', valueHint: 'ID' },
  'secret-key-file': {
    type: 'string',
    description: 'file holding the S3 secret key (default: env AWS_SECRET_ACCESS_KEY)',
    valueHint: 'FILE',
  },
  'credential-secret': {
    type: 'string',
    description:
      'Secret with the S3 credentials: written from the values above, or used as it is (default NAME-s3-credentials)',
    valueHint: 'SECRET',
  },
  'velero-location': {
    type: 'string',
    description:
      "make this the location of Velero's backups with --data-mover ferry to Velero's location NAME (same bucket, prefix <Velero's prefix>/plugins/ferry)",
    valueHint: 'NAME',
  },
  'cross-namespace-restores': {
    type: 'string',
    description:
      'let restores in namespaces TO read the backups of namespace FROM, e.g. app=restore (repeatable; TO may be * for all)',
    valueHint: 'FROM=TO,...',
  },
  'password-file': {
    type: 'string',
    description: "file holding the secret every namespace's repository password is derived from",
    valueHint: 'FILE',
  },
  'password-secret': {
    type: 'string',
    description:
      'Secret holding that secret under key "password": written from --password-file, or used as it is (default NAME-repository-password)',
    valueHint: 'SECRET',
  },
  check: {
    type: 'boolean',
    description: 'check the bucket with the credentials before creating anything (--no-check skips it)',
    default: true,
  },
  ...locationKubeArgs,
  ...outputArgs,
} as const;

interface Flags {
  endpoint?: string;
  bucket?: string;
  prefix?: string;
  region?: string;
  'path-style'?: boolean;
  cacert?: string;
  'allowed-namespaces'?: string;
  'velero-location'?: string;
  'access-key'?: string;
  'secret-key-file'?: string;
}

/** The first line of a file: an editor's trailing newline is not part of the secret. */
async function firstLine(path: string, flag: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read ${flag} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
  const line = text.split(/\r?\n/)[0];
  if (line === '') throw new UsageError(`${flag} ${path} is empty`);
  return line;
}

async function specFrom(flags: Flags, credential: string, password: string): Promise<BackupStorageLocationSpec> {
  if (!flags.endpoint) throw new UsageError('--endpoint is required (http(s)://HOST[:PORT])');
  if (!/^https?:\/\/[^/\s]+\/?$/.test(flags.endpoint))
    throw new UsageError(`--endpoint "${flags.endpoint}" must be http(s)://HOST[:PORT]`);
  if (!flags.bucket) throw new UsageError('--bucket is required');
  const allowed = (flags['allowed-namespaces'] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (allowed.length === 0)
    throw new UsageError("--allowed-namespaces is required: a comma-separated list of namespaces, or '*' for all");
  const s3: BackupStorageLocationSpec['s3'] = {
    endpoint: flags.endpoint.replace(/\/$/, ''),
    bucket: flags.bucket,
    forcePathStyle: flags['path-style'] ?? true,
  };
  if (flags.prefix) s3.prefix = flags.prefix.replace(/^\/+|\/+$/g, '');
  if (flags.region) s3.region = flags.region;
  if (flags.cacert) s3.caBundle = Buffer.from(await readCaFile(flags.cacert)).toString('base64');
  return {
    s3,
    credential: { name: credential },
    repositoryPassword: { name: password, key: 'password' },
    allowedNamespaces: allowed,
  };
}

async function readCaFile(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new UsageError(
      `cannot read --cacert ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
    );
  }
}

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

/** The S3 credentials to check and store: from the flags or environment, else from the existing Secret. */
async function credentialsFrom(
  flags: Flags,
  kube: Kube,
  namespace: string,
  secretName: string,
  named: boolean,
): Promise<{ accessKeyId: string; secretAccessKey: string; write: boolean }> {
  const explicit = flags['access-key'] !== undefined || flags['secret-key-file'] !== undefined;
  if (named && !explicit) {
    const existing = await kube.get<Secret>({ kind: 'Secret', namespace, name: secretName });
    const id = existing?.data?.AWS_ACCESS_KEY_ID;
    const key = existing?.data?.AWS_SECRET_ACCESS_KEY;
    if (!id || !key)
      throw new UsageError(
        `--credential-secret ${secretName} must name a Secret in ${namespace} with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or pass --access-key and --secret-key-file`,
      );
    return {
      accessKeyId: Buffer.from(id, 'base64').toString('utf8').trim(),
      secretAccessKey: Buffer.from(key, 'base64').toString('utf8').trim(),
      write: false,
    };
  }
  const accessKeyId = flags['access-key'] ?? process.env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = flags['secret-key-file']
    ? await firstLine(flags['secret-key-file'], '--secret-key-file')
    : process.env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId)
    throw new UsageError(
      'no S3 access key: pass --access-key ID or set AWS_ACCESS_KEY_ID (or --credential-secret naming an existing Secret)',
    );
  if (!secretAccessKey)
    throw new UsageError(
      'no S3 secret key: pass --secret-key-file FILE or set AWS_SECRET_ACCESS_KEY (or --credential-secret naming an existing Secret)',
    );
  return { accessKeyId, secretAccessKey, write: true };
}

/** Creates the Secret, or replaces its data when it exists. */
async function writeSecret(
  kube: Kube,
  namespace: string,
  name: string,
  location: string,
  data: Record<string, string>,
): Promise<void> {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
  const existing = await kube.get<Secret>({ kind: 'Secret', namespace, name });
  const labels = { 'app.kubernetes.io/name': 'ferry', 'ferry.dev/location': labelValue(location) };
  if (existing)
    await kube.replace<Secret>({
      ...existing,
      data: encoded,
      metadata: { ...existing.metadata, labels: { ...existing.metadata.labels, ...labels } },
    });
  else
    await kube.create<Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name, namespace, labels },
      data: encoded,
    });
}

export default defineCommand({
  meta: {
    name: 'create',
    description: 'Create a storage location (and its Secrets), after checking the bucket answers with its credentials',
  },
  args,
  async run({ args: flags, rawArgs }) {
    const format = outputFormat(flags);
    const name = objectName(flags.name, 'NAME');
    const credentialSecret = objectName(
      flags['credential-secret'] ?? fitted(`${name}-s3-credentials`, maxObjectName),
      '--credential-secret',
    );
    const passwordSecret = objectName(
      flags['password-secret'] ?? fitted(`${name}-repository-password`, maxObjectName),
      '--password-secret',
    );
    const spec = await specFrom(flags, credentialSecret, passwordSecret);
    const crossNamespace = crossNamespaceRestores(rawArgs);
    if (crossNamespace) spec.crossNamespaceRestores = crossNamespace;
    if (flags['velero-location'] !== undefined)
      spec.velero = { backupStorageLocation: objectName(flags['velero-location'], '--velero-location') };
    const password = flags['password-file'] ? await firstLine(flags['password-file'], '--password-file') : undefined;
    await withKube(flags, async ({ kube, ferryNamespace }) => {
      if (await kube.get({ kind: 'BackupStorageLocation', namespace: ferryNamespace, name })) {
        throw new Error(`BackupStorageLocation "${name}" already exists in namespace ${ferryNamespace}.`);
      }
      if (password === undefined) {
        const existing = await kube.get<Secret>({ kind: 'Secret', namespace: ferryNamespace, name: passwordSecret });
        if (!existing?.data?.password)
          throw new UsageError(
            `no repository password: pass --password-file FILE, or --password-secret naming a Secret in ${ferryNamespace} with key "password"`,
          );
      }
      const creds = await credentialsFrom(
        flags,
        kube,
        ferryNamespace,
        credentialSecret,
        flags['credential-secret'] !== undefined,
      );
      const check = flags.check
        ? await probeLocation({
            ...spec.s3,
            caFile: flags.cacert,
            pathStyle: spec.s3.forcePathStyle,
            credentials: creds,
          })
        : undefined;
      if (check && !check.ok)
        throw new Error(`${check.message} ${fixInFlags(check.failure, check.fix)} Nothing was created.`);
      if (creds.write)
        await writeSecret(kube, ferryNamespace, credentialSecret, name, {
          AWS_ACCESS_KEY_ID: creds.accessKeyId,
          AWS_SECRET_ACCESS_KEY: creds.secretAccessKey,
        });
      if (password !== undefined) await writeSecret(kube, ferryNamespace, passwordSecret, name, { password });
      let created = await kube.create<StoredLocation>({
        apiVersion,
        kind: 'BackupStorageLocation',
        metadata: { name, namespace: ferryNamespace, labels: { 'app.kubernetes.io/name': 'ferry' } },
        spec,
      });
      if (check) {
        await recordCheck(kube, created, check);
        created =
          (await kube.get<StoredLocation>({ kind: 'BackupStorageLocation', namespace: ferryNamespace, name })) ??
          created;
      }
      if (isDocument(format)) printDocument(created, format);
      else
        consola.success(
          `BackupStorageLocation ${name} created in ${ferryNamespace}${check ? `: ${check.message}` : ' (not checked)'}`,
        );
    });
  },
});
