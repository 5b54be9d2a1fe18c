// BackupStorageLocation at admission: a new location, or a new generation of one, as the apiserver stores it
// (./stored.ts; never as a review says), starts the maintenance reconcile at once (a Job from the ferry-maintenance-reconcile CronJob's template, named after the location's uid and
// generation), so its maintenance CronJobs appear within a minute instead of at the next periodic reconcile, which
// stays as the safety net for a lost call. Never on a dry run; what a location may hold is checked before (./location-rules.ts).
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import { isAlreadyExists } from '../shared/kube/errors.ts';
import type { StoredChange } from './stored.ts';

/** The periodic reconcile CronJob (jobs/maintenance-reconcile.yaml), whose jobTemplate the Job copies. */
export const maintenanceReconcileTemplate = 'ferry-maintenance-reconcile';

export interface LocationDeps {
  kube: Kube;
  /** ferry's namespace: the locations, the template and the Job */
  namespace: string;
  log?: Logger;
}

export function locationReconcileJobName(uid: string, generation: number): string {
  return `ferry-maint-reconcile-${uid.replaceAll('-', '').slice(0, 16)}-g${generation}`;
}

/** What a stored change of a location sets off: a reconcile for a new spec, nothing otherwise. */
export async function locationChanged(
  change: StoredChange,
  deps: LocationDeps,
): Promise<'created' | 'exists' | 'none'> {
  const { before, after } = change;
  if (!after || after.metadata.deletionTimestamp || before?.metadata.generation === after.metadata.generation)
    return 'none';
  return startLocationReconcile(after, deps);
}

async function startLocationReconcile(location: KubeObject, deps: LocationDeps): Promise<'created' | 'exists'> {
  const { kube, namespace } = deps;
  const template = await kube.get<KubeObject>({ kind: 'CronJob', namespace, name: maintenanceReconcileTemplate });
  if (!template)
    throw new Error(
      `The CronJob ${namespace}/${maintenanceReconcileTemplate} does not exist; install jobs/ from ferry's deploy/ kustomization.`,
    );
  const jobTemplate = structuredClone(
    (
      template.spec as {
        jobTemplate?: { metadata?: { labels?: Record<string, string> }; spec?: Record<string, unknown> };
      }
    ).jobTemplate,
  );
  if (!jobTemplate?.spec) throw new Error(`CronJob ${maintenanceReconcileTemplate} has no jobTemplate.`);
  const name = locationReconcileJobName(location.metadata.uid ?? '', location.metadata.generation ?? 1);
  const job: KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name,
      namespace,
      labels: jobTemplate.metadata?.labels,
      annotations: { 'ferry.dev/location': location.metadata.name },
    },
    spec: jobTemplate.spec,
  };
  try {
    await kube.create(job);
    deps.log?.info('maintenance reconcile Job created', { location: location.metadata.name, job: name });
    return 'created';
  } catch (err) {
    if (isAlreadyExists(err)) return 'exists';
    throw err;
  }
}
