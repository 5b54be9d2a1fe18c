// schedule (`ferry-step schedule <namespace>/<name>`, started by the dispatcher for each new generation of a
// BackupSchedule): makes the schedule's CronJob in its namespace from the template jobs/schedule-run.yaml, with
// the schedule, time zone and suspend of the spec, run by its own ServiceAccount bound to ferry-schedule-run. All
// three are owned by the schedule, so Kubernetes deletes them with it. Idempotent: running it again converges.
import { apiVersion } from '../../shared/api/types.ts';
import { rfc3339, setCondition } from '../../shared/kube/conditions.ts';
import { isAlreadyExists } from '../../shared/kube/errors.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { KindName } from '../../shared/kube/resources.ts';
import { nextRun, parseCron } from '../../shared/schedule/cron.ts';
import {
  cronJobName,
  runClusterRole,
  runTemplate,
  scheduleLabel,
  scheduleLabels,
} from '../../shared/schedule/names.ts';
import type { Outcome } from '../context.ts';
import { readSchedule, scheduleEvent, writeScheduleStatus } from './context.ts';
import type { Schedule, ScheduleContext, ScheduleRef } from './context.ts';
import { stepContainer } from '../../shared/step-job/contract.ts';

function ownerOf(s: Schedule): NonNullable<KubeObject['metadata']['ownerReferences']>[number] {
  return { apiVersion, kind: 'BackupSchedule', name: s.metadata.name, uid: s.metadata.uid ?? '', controller: true };
}

interface Container {
  name: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: unknown }[];
}

interface JobTemplate {
  metadata?: { labels?: Record<string, string> };
  spec: {
    template: {
      metadata?: { labels?: Record<string, string> };
      spec: { serviceAccountName?: string; containers: Container[] };
    };
  } & Record<string, unknown>;
}

/** The schedule's CronJob: the template's Job, with the schedule's timing, ServiceAccount and arguments. */
export function buildRunCronJob(template: KubeObject, s: Schedule, ferryNamespace: string): KubeObject {
  const spec = template.spec as {
    jobTemplate?: JobTemplate;
    startingDeadlineSeconds?: number;
    successfulJobsHistoryLimit?: number;
    failedJobsHistoryLimit?: number;
  };
  const jobTemplate = structuredClone(spec.jobTemplate);
  const container = jobTemplate?.spec?.template?.spec?.containers?.find((c) => c.name === stepContainer);
  if (!jobTemplate || !container)
    throw new Error(`CronJob ${runTemplate} has no jobTemplate with a container named "${stepContainer}".`);
  const name = cronJobName(s.metadata.name);
  const labels = {
    'app.kubernetes.io/name': 'ferry',
    'app.kubernetes.io/component': 'schedule-run',
    [scheduleLabels.schedule]: scheduleLabel(s.metadata.name),
  };
  container.args = ['schedule-run', `${s.metadata.namespace}/${s.metadata.name}`];
  // the pod runs in the schedule's namespace; ferry's own is where the templates and locations are
  container.env = [
    ...(container.env ?? []).filter((e) => e.name !== 'FERRY_NAMESPACE'),
    { name: 'FERRY_NAMESPACE', value: ferryNamespace },
  ];
  jobTemplate.spec.template.spec.serviceAccountName = name;
  jobTemplate.metadata = { ...jobTemplate.metadata, labels: { ...jobTemplate.metadata?.labels, ...labels } };
  jobTemplate.spec.template.metadata = {
    ...jobTemplate.spec.template.metadata,
    labels: { ...jobTemplate.spec.template.metadata?.labels, ...labels },
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: s.metadata.namespace, labels, ownerReferences: [ownerOf(s)] },
    spec: {
      schedule: s.spec.schedule,
      timeZone: s.spec.timeZone ?? 'UTC',
      suspend: s.spec.suspend ?? false,
      // the run itself applies spec.concurrencyPolicy to the DataUploads, which outlive its pod
      concurrencyPolicy: 'Allow',
      startingDeadlineSeconds: spec.startingDeadlineSeconds ?? 300,
      successfulJobsHistoryLimit: spec.successfulJobsHistoryLimit ?? 3,
      failedJobsHistoryLimit: spec.failedJobsHistoryLimit ?? 3,
      jobTemplate,
    },
  };
}

async function ensure(ctx: ScheduleContext, obj: KubeObject): Promise<void> {
  try {
    await ctx.kube.create(obj);
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

async function ensureIdentity(ctx: ScheduleContext, s: Schedule, name: string): Promise<void> {
  const metadata = {
    name,
    namespace: s.metadata.namespace,
    labels: { [scheduleLabels.schedule]: scheduleLabel(s.metadata.name) },
    ownerReferences: [ownerOf(s)],
  };
  await ensure(ctx, { apiVersion: 'v1', kind: 'ServiceAccount', metadata });
  await ensure(ctx, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: runClusterRole },
    subjects: [{ kind: 'ServiceAccount', name, namespace: s.metadata.namespace }],
  });
}

async function applyCronJob(ctx: ScheduleContext, desired: KubeObject): Promise<'created' | 'updated'> {
  const key = { kind: 'CronJob' as KindName, namespace: desired.metadata.namespace, name: desired.metadata.name };
  const current = await ctx.kube.get<KubeObject>(key);
  if (!current) {
    await ctx.kube.create(desired);
    return 'created';
  }
  await ctx.kube.replace({
    ...desired,
    metadata: {
      ...current.metadata,
      labels: desired.metadata.labels,
      ownerReferences: desired.metadata.ownerReferences,
    },
  });
  return 'updated';
}

export async function reconcileSchedule(ctx: ScheduleContext, ref: ScheduleRef): Promise<Outcome> {
  const s = await readSchedule(ctx, ref);
  if (!s) return { outcome: 'Skipped', reason: `BackupSchedule ${ref.namespace}/${ref.name} does not exist.` };
  if (s.metadata.deletionTimestamp)
    return { outcome: 'Skipped', reason: `BackupSchedule ${ref.namespace}/${ref.name} is being deleted.` };
  const template = await ctx.kube.get<KubeObject>({
    kind: 'CronJob',
    namespace: ctx.ferryNamespace,
    name: runTemplate,
  });
  if (!template)
    throw new Error(
      `The Job template CronJob ${ctx.ferryNamespace}/${runTemplate} does not exist; install jobs/ from ferry's deploy/ kustomization.`,
    );
  const desired = buildRunCronJob(template, s, ctx.ferryNamespace);
  await ensureIdentity(ctx, s, desired.metadata.name);
  const done = await applyCronJob(ctx, desired);
  const now = ctx.now();
  const next = s.spec.suspend
    ? undefined
    : nextRun(parseCron(s.spec.schedule), now.getTime(), s.spec.timeZone ?? 'UTC');
  const note = `CronJob ${desired.metadata.name} ${done} for generation ${s.metadata.generation}${s.spec.suspend ? ' (suspended)' : ''}.`;
  await writeScheduleStatus(ctx, s, (status, fresh) => {
    if ((fresh.metadata.generation ?? 0) > (s.metadata.generation ?? 0)) return false;
    status.observedGeneration = s.metadata.generation;
    status.cronJob = desired.metadata.name;
    if (next === undefined) delete status.nextScheduleTime;
    else status.nextScheduleTime = rfc3339(new Date(next));
    status.conditions = setCondition(
      status.conditions,
      {
        type: 'Ready',
        status: s.spec.suspend ? 'False' : 'True',
        reason: s.spec.suspend ? 'Suspended' : 'Scheduled',
        message: note,
        observedGeneration: s.metadata.generation,
      },
      now,
    );
  });
  await scheduleEvent(ctx, s, { type: 'Normal', reason: s.spec.suspend ? 'Suspended' : 'Scheduled', note });
  return { outcome: 'Advanced', reason: note };
}
