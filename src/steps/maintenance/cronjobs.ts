// The maintenance CronJobs of every storage location: one per task (prune, check, check-data), copied from the
// suspended template CronJob `ferry-step-maintenance` (jobs/maintenance.yaml) with the location's schedules, owned by
// the location (deleting it deletes them). `ferry-step maintenance --reconcile`, run by the ferry-maintenance-
// reconcile CronJob, makes what exists match: a new location, a changed schedule or an edited template (through
// Git) reach the CronJobs on its next run. By hand, a run is `kubectl create job --from=cronjob/<name> <job>`.
// The location's two Secrets are volumes of its CronJobs' pods: the maintenance account reads no Secret.
// A location with spec.backupSync also gets ferry-sync-<location>, made from the same template but running the
// backup sync (`ferry-step location-sync <location>`) as its own account, ferry-step-sync; when spec.backupSync goes,
// it is suspended and garbage collection deletes it (releaseSyncCronJob).
import { createHash } from 'node:crypto';
import type { BackupStorageLocation, MaintenanceTask } from '../../shared/api/types.ts';
import { apiVersion } from '../../shared/api/types.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import { fitted, labelValue } from '../../shared/kube/names.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { locationSecretNames, mountSecrets } from '../../shared/location/mounted-secrets.ts';
import { stepContainer } from '../../shared/step-job/contract.ts';
import type { MaintenanceContext } from './repository.ts';

export const templateCronJob = 'ferry-step-maintenance';
export const tasks: readonly MaintenanceTask[] = ['prune', 'check', 'check-data'];

export const maintenanceLabels = {
  component: 'app.kubernetes.io/component',
  task: 'ferry.dev/maintenance-task',
  location: 'ferry.dev/location',
} as const;

/** The hash of what a CronJob was made from, so an unchanged one is not written again. */
const sourceAnnotation = 'ferry.dev/maintenance-source';

export const defaultSchedules: Record<MaintenanceTask, string> = {
  prune: '0 3 * * 0',
  check: '0 1 * * *',
  'check-data': '0 4 * * 6',
};
export const defaultReadDataSubset = '10%';

/** Jobs made from a CronJob append 11 characters; a Job name must stay within 63. */
const maxCronJobName = 52;

function shortHash(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/** `ferry-maint-<task>-<location>`, shortened with a hash when too long. */
export function cronJobName(location: string, task: MaintenanceTask): string {
  return fitted(`ferry-maint-${task}-${location}`, maxCronJobName);
}

export function scheduleOf(bsl: BackupStorageLocation, task: MaintenanceTask): string {
  const m = bsl.spec.maintenance;
  const given =
    task === 'prune' ? m?.prune?.schedule : task === 'check' ? m?.check?.schedule : m?.check?.readDataSchedule;
  return given ?? defaultSchedules[task];
}

interface JobTemplate {
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    template: {
      metadata?: { labels?: Record<string, string> };
      spec: {
        serviceAccountName?: string;
        volumes?: Record<string, unknown>[];
        containers: { name: string; args?: string[]; volumeMounts?: { name: string; mountPath: string }[] }[];
      };
    };
  };
}

function jobTemplateOf(template: KubeObject): JobTemplate {
  const jobTemplate = (template.spec as { jobTemplate?: JobTemplate } | undefined)?.jobTemplate;
  if (!jobTemplate?.spec?.template?.spec?.containers?.some((c) => c.name === stepContainer)) {
    throw new Error(`CronJob ${templateCronJob} has no jobTemplate with a container named "${stepContainer}".`);
  }
  return structuredClone(jobTemplate);
}

/** What differs between the CronJobs made from the template for a location. */
export interface CronJobShape {
  name: string;
  /** the step's arguments */
  args: string[];
  /** labels of the CronJob, its Jobs and their pods */
  labels: Record<string, string>;
  schedule: string;
  suspend: boolean;
  /** another account than the template's */
  serviceAccountName?: string;
}

/** A CronJob of `bsl` made from the template, with the location's Secrets mounted and the location as its owner. */
export function cronJobFromTemplate(
  template: KubeObject,
  bsl: BackupStorageLocation & KubeObject,
  shape: CronJobShape,
): KubeObject {
  const location = bsl.metadata.name;
  const jobTemplate = jobTemplateOf(template);
  const pod = jobTemplate.spec.template.spec;
  const container = pod.containers.find((c) => c.name === stepContainer)!;
  container.args = shape.args;
  if (shape.serviceAccountName) pod.serviceAccountName = shape.serviceAccountName;
  mountSecrets(pod, container, locationSecretNames(bsl.spec));
  const ours = { ...shape.labels, [maintenanceLabels.location]: labelValue(location) };
  jobTemplate.metadata = { ...jobTemplate.metadata, labels: { ...jobTemplate.metadata?.labels, ...ours } };
  const podMeta = jobTemplate.spec.template.metadata ?? {};
  jobTemplate.spec.template.metadata = { ...podMeta, labels: { ...podMeta.labels, ...ours } };
  const templateSpec = template.spec as Record<string, unknown>;
  const spec = {
    schedule: shape.schedule,
    suspend: shape.suspend,
    concurrencyPolicy: 'Forbid',
    startingDeadlineSeconds: templateSpec.startingDeadlineSeconds ?? 3600,
    successfulJobsHistoryLimit: templateSpec.successfulJobsHistoryLimit ?? 3,
    failedJobsHistoryLimit: templateSpec.failedJobsHistoryLimit ?? 3,
    jobTemplate,
  };
  const owner = {
    apiVersion,
    kind: 'BackupStorageLocation',
    name: location,
    uid: bsl.metadata.uid ?? '',
    controller: true,
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: {
      name: shape.name,
      namespace: bsl.metadata.namespace,
      labels: { ...template.metadata.labels, ...ours },
      annotations: { [sourceAnnotation]: shortHash(JSON.stringify([spec, owner]), 16), 'ferry.dev/location': location },
      ownerReferences: [owner],
    },
    spec,
  };
}

/** The CronJob of one task of one location, as it should be. */
export function desiredCronJob(
  template: KubeObject,
  bsl: BackupStorageLocation & KubeObject,
  task: MaintenanceTask,
): KubeObject {
  return cronJobFromTemplate(template, bsl, {
    name: cronJobName(bsl.metadata.name, task),
    args: ['maintenance', bsl.metadata.name, task],
    labels: { [maintenanceLabels.component]: 'maintenance', [maintenanceLabels.task]: task },
    schedule: scheduleOf(bsl, task),
    suspend: bsl.spec.maintenance?.suspend ?? false,
  });
}

/** Its account: the sync creates and deletes DataUploads, which no maintenance run may (policies/step-sync.yaml). */
export const syncServiceAccount = 'ferry-step-sync';
export const defaultSyncSchedule = '* * * * *';

/** `ferry-sync-<location>`, shortened with a hash when too long. */
export function syncCronJobName(location: string): string {
  return fitted(`ferry-sync-${location}`, maxCronJobName);
}

/** The backup sync CronJob of a location with spec.backupSync. */
export function desiredSyncCronJob(template: KubeObject, bsl: BackupStorageLocation & KubeObject): KubeObject {
  const sync = bsl.spec.backupSync ?? {};
  return cronJobFromTemplate(template, bsl, {
    name: syncCronJobName(bsl.metadata.name),
    args: ['location-sync', bsl.metadata.name],
    labels: { [maintenanceLabels.component]: 'location-sync' },
    schedule: sync.schedule ?? defaultSyncSchedule,
    suspend: sync.suspend ?? false,
    serviceAccountName: syncServiceAccount,
  });
}

export interface ReconcileReport {
  created: string[];
  updated: string[];
  deleted: string[];
  unchanged: number;
  errors: string[];
}

/** Creates or updates the maintenance CronJobs of every location in ferry's namespace. */
export async function reconcileCronJobs(ctx: MaintenanceContext): Promise<ReconcileReport> {
  const { kube, ferryNamespace } = ctx;
  const template = await kube.get<KubeObject>({ kind: 'CronJob', namespace: ferryNamespace, name: templateCronJob });
  if (!template)
    throw new Error(
      `The maintenance template CronJob ${ferryNamespace}/${templateCronJob} does not exist; install jobs/ from ferry's deploy/ kustomization.`,
    );
  const report: ReconcileReport = { created: [], updated: [], deleted: [], unchanged: 0, errors: [] };
  const locations = await kube.list<BackupStorageLocation & KubeObject>('BackupStorageLocation', {
    namespace: ferryNamespace,
  });
  for (const bsl of locations.filter((l) => !l.metadata.deletionTimestamp)) {
    for (const task of tasks) {
      const want = desiredCronJob(template, bsl, task);
      try {
        await ensure(ctx, want, report);
      } catch (err) {
        report.errors.push(`CronJob ${want.metadata.name}: ${(err as Error).message}`);
      }
    }
    const sync = syncCronJobName(bsl.metadata.name);
    try {
      if (bsl.spec.backupSync) await ensure(ctx, desiredSyncCronJob(template, bsl), report);
      else if (await releaseSyncCronJob(ctx, sync)) report.deleted.push(sync);
    } catch (err) {
      report.errors.push(`CronJob ${sync}: ${(err as Error).message}`);
    }
  }
  return report;
}

/** The owner a sync CronJob gets once its location's spec.backupSync is gone: no object has this uid. */
export const goneOwnerUID = '00000000-0000-0000-0000-000000000000';

/**
 * Gives the sync CronJob over to garbage collection: owned by an object that does not exist, Kubernetes deletes it.
 * The reconcile account deletes nothing itself (its role has no delete), so it cannot delete another CronJob either.
 * True when it was handed over now.
 */
async function releaseSyncCronJob(ctx: MaintenanceContext, name: string): Promise<boolean> {
  const key = { kind: 'CronJob' as const, namespace: ctx.ferryNamespace, name };
  const have = await ctx.kube.get<KubeObject>(key);
  const owners = have?.metadata.ownerReferences ?? [];
  if (!have || (owners.length === 1 && owners[0].uid === goneOwnerUID)) return false;
  const spec = have.spec as { suspend?: boolean };
  const released = owners.map((o) => ({ ...o, uid: goneOwnerUID }));
  // without the source hash, a spec.backupSync set again before the collection makes it anew
  const { [sourceAnnotation]: _, ...annotations } = have.metadata.annotations ?? {};
  await ctx.kube.replace({
    ...have,
    metadata: { ...have.metadata, annotations, ownerReferences: released },
    spec: { ...spec, suspend: true },
  });
  return true;
}

async function ensure(ctx: MaintenanceContext, want: KubeObject, report: ReconcileReport): Promise<void> {
  const key = { kind: 'CronJob' as const, namespace: want.metadata.namespace, name: want.metadata.name };
  const have = await ctx.kube.get<KubeObject>(key);
  if (!have) {
    try {
      await ctx.kube.create(want);
      report.created.push(want.metadata.name);
    } catch (err) {
      // another reconcile made it meanwhile; the next run compares it
      if (!isAlreadyExists(err)) throw err;
    }
    return;
  }
  if (have.metadata.annotations?.[sourceAnnotation] === want.metadata.annotations?.[sourceAnnotation]) {
    report.unchanged++;
    return;
  }
  await ctx.kube.replace({ ...want, metadata: { ...want.metadata, resourceVersion: have.metadata.resourceVersion } });
  report.updated.push(want.metadata.name);
}
