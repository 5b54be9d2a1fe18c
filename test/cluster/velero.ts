// Velero in the box, as `velero install --features=EnableCSI --use-node-agent=false` sets it up in a cluster: its
// CRDs (printed by the pinned velero binary itself), the velero namespace and ServiceAccount bound to
// cluster-admin, a BackupStorageLocation "default" on the box's MinIO through the AWS plugin, its Deployment (at
// zero replicas: Velero reads it), and the server with the CSI feature and no node-agent. The server runs as a box daemon with a client certificate for the velero
// ServiceAccount's user name, so the RBAC Velero's install makes applies unchanged.
import { execFile } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { DaemonSpec } from './daemons.ts';
import type { StatePaths } from './paths.ts';

const run = promisify(execFile);

export const veleroNamespace = 'velero';
const veleroLocation = 'default';
/** Velero's prefix in the box's bucket: its own folders go under it, ferry's repositories under plugins/ferry/ */
const veleroPrefix = 'velero';

export interface VeleroBinaries {
  velero: string;
  plugin: string;
}

export interface VeleroSetup {
  /** Velero's version, for the image its Deployment names */
  version: string;
  bucket: string;
  /** MinIO as the pods and the host reach it */
  endpoint: string;
  accessKey: string;
  secretKey: string;
}

/** Velero's CRDs as one JSON document per line, for the box's bootstrap. */
async function crds(velero: string): Promise<string> {
  const { stdout } = await run(velero, ['install', '--crds-only', '--dry-run', '-o', 'json'], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const list = JSON.parse(stdout) as { items: object[] };
  return list.items.map((o) => JSON.stringify(o)).join('\n');
}

function objects(s: VeleroSetup): object[] {
  const meta = (name: string) => ({ name, namespace: veleroNamespace, labels: { component: 'velero' } });
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: veleroNamespace, labels: { component: 'velero' } } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('velero') },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'velero', labels: { component: 'velero' } },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: 'velero', namespace: veleroNamespace }],
    },
    {
      // the Deployment `velero install` makes, at zero replicas: the server runs as a box daemon (below), but
      // Velero reads its own Deployment (its restore actions take the image of restore helpers from it)
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('velero'),
      spec: {
        replicas: 0,
        selector: { matchLabels: { deploy: 'velero' } },
        template: {
          metadata: { labels: { deploy: 'velero', component: 'velero' } },
          spec: {
            serviceAccountName: 'velero',
            containers: [
              {
                name: 'velero',
                image: `velero/velero:${s.version}`,
                command: ['/velero'],
                args: ['server', '--features=EnableCSI', '--uploader-type=kopia'],
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: meta('cloud-credentials'),
      stringData: {
        cloud: `[default]\naws_access_key_id=${s.accessKey}\naws_secret_access_key=${s.secretKey}\n`,
      },
    },
    {
      apiVersion: 'velero.io/v1',
      kind: 'BackupStorageLocation',
      metadata: meta(veleroLocation),
      spec: {
        provider: 'aws',
        default: true,
        objectStorage: { bucket: s.bucket, prefix: veleroPrefix },
        credential: { name: 'cloud-credentials', key: 'cloud' },
        config: { region: 'minio', s3ForcePathStyle: 'true', s3Url: s.endpoint },
      },
    },
  ];
}

/** Writes the manifests (CRDs first) and the plugin folder; returns the manifest files in apply order. */
export async function prepareVelero(b: VeleroBinaries, paths: StatePaths, s: VeleroSetup): Promise<string[]> {
  const dir = join(paths.root, 'velero');
  await mkdir(join(dir, 'plugins'), { recursive: true });
  // the server starts every executable of its plugin folder
  await symlink(b.plugin, join(dir, 'plugins', 'velero-plugin-for-aws'));
  const files = [join(dir, 'crds.json'), join(dir, 'install.json')];
  await writeFile(files[0], await crds(b.velero));
  await writeFile(
    files[1],
    objects(s)
      .map((o) => JSON.stringify(o))
      .join('\n'),
  );
  return files;
}

export function veleroSpec(b: VeleroBinaries, paths: StatePaths, metricsPort: number): DaemonSpec {
  const dir = join(paths.root, 'velero');
  return {
    name: 'velero',
    binary: b.velero,
    args: [
      'server',
      `--kubeconfig=${join(paths.pki, 'velero.kubeconfig')}`,
      `--namespace=${veleroNamespace}`,
      '--features=EnableCSI',
      `--plugin-dir=${join(dir, 'plugins')}`,
      `--metrics-address=127.0.0.1:${metricsPort}`,
      '--profiler-address=',
      '--uploader-type=kopia',
      // a test waits seconds, not minutes, for Velero to look at its operations and its location
      '--item-operation-sync-frequency=3s',
      '--store-validation-frequency=10s',
      '--backup-sync-period=30s',
      '--log-level=info',
    ],
    // the server keeps the credentials of its locations in files below TMPDIR
    env: { TMPDIR: dir },
  };
}
