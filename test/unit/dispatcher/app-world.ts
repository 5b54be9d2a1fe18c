// AppBackups and AppRestores for dispatcher tests, stored-looking (uid, creation time), and a world holding their
// Job templates from jobs/ besides the data steps'.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import yaml from 'js-yaml';
import type { AppBackup, AppBackupPhase, AppRestore, AppRestorePhase } from '../../../src/shared/api/app.ts';
import type { AppResource } from '../../../src/shared/app/jobs.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { world } from './world.ts';
import type { World } from './world.ts';

const jobsDir = join(import.meta.dirname, '..', '..', '..', 'jobs');

let counter = 0;

function meta(name: string, namespace: string): AppResource['metadata'] {
  counter++;
  return {
    name,
    namespace,
    uid: `a${counter.toString(16).padStart(7, '0')}-0000-4000-8000-000000000000`,
    creationTimestamp: '2025-01-01T00:00:00Z',
    resourceVersion: '1',
  };
}

export function appBackup(
  name: string,
  phase?: AppBackupPhase,
  spec: Partial<AppBackup['spec']> = {},
  metadata: Partial<AppBackup['metadata']> = {},
): AppResource {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'AppBackup',
    metadata: { ...meta(name, 'app'), ...metadata },
    spec: { pvcs: ['data'], backupStorageLocation: 'default', ...spec },
    ...(phase ? { status: { phase } } : {}),
  };
}

export function appRestore(
  name: string,
  phase?: AppRestorePhase,
  spec: Partial<AppRestore['spec']> = {},
  namespace = 'app',
): AppResource {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'AppRestore',
    metadata: meta(name, namespace),
    spec: { appBackup: { name: 'db' }, ...spec },
    ...(phase ? { status: { phase } } : {}),
  };
}

/** The dispatcher's world with the app-backup and app-restore templates installed too. */
export function appWorld(): World {
  const w = world();
  for (const file of ['app-backup', 'app-restore'])
    w.kube.seed(yaml.load(readFileSync(join(jobsDir, `${file}.yaml`), 'utf8')) as KubeObject);
  return w;
}
