// BackupSchedule at admission: valid fields, a cron expression and time zone that mean something, PVCs named or
// selected; then (never on a dry run), once the apiserver has stored the change, the schedule reconcile Job for a
// new generation, which makes the schedule's CronJob. A schedule that the apiserver shows deleted (gone, or with a
// deletionTimestamp) while annotated ferry.dev/delete-backups: "true" takes its DataUploads with it. Both are
// decided from the schedule as read from the apiserver (./stored.ts), never from a review.
import { issueText, validateFields } from '../shared/api/schemas.ts';
import type { BackupSchedule } from '../shared/api/types.ts';
import { isAlreadyExists } from '../shared/kube/errors.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import { cronProblem } from '../shared/schedule/cron.ts';
import {
  reconcileJobName,
  reconcileTemplate,
  scheduleAnnotations,
  scheduleLabel,
  scheduleLabels,
  scheduleSelector,
} from '../shared/schedule/names.ts';
import { expressionProblems, selectsSomething } from '../shared/schedule/selector.ts';
import { timeZoneProblem } from '../shared/schedule/zone.ts';
import { hooksProblems } from './app-rules.ts';
import { invalid } from './admission.ts';
import type { Denial } from './admission.ts';
import { labels as resourceLabels, resourceAnnotation, stepContainer } from '../shared/step-job/contract.ts';
import type { StoredChange } from './stored.ts';

type Schedule = BackupSchedule & KubeObject;

/** The spec's problems beyond its fields' shapes, each naming its field. */
function meaningProblems(spec: BackupSchedule['spec']): string[] {
  const problems: string[] = [];
  const cron = cronProblem(spec.schedule);
  if (cron) problems.push(`spec.schedule: ${cron}`);
  const zone = spec.timeZone === undefined ? undefined : timeZoneProblem(spec.timeZone);
  if (zone) problems.push(`spec.timeZone: ${zone}`);
  if (!spec.pvcs?.length && !selectsSomething(spec.selector))
    problems.push('spec: name PVCs in spec.pvcs or select them with spec.selector (or both)');
  problems.push(...expressionProblems(spec.selector, 'spec.selector'));
  problems.push(...hooksProblems(spec.appBackup?.hooks, 'spec.appBackup.hooks'));
  return problems;
}

export function checkSchedule(obj: unknown, part: 'spec' | 'status'): Denial | undefined {
  const value = (obj as { spec?: unknown; status?: unknown } | undefined)?.[part];
  const issues = validateFields('BackupSchedule', part, value).map(issueText);
  if (issues.length) return invalid(issues.join('; '));
  if (part === 'status') return undefined;
  const problems = meaningProblems((obj as Schedule).spec);
  return problems.length ? invalid(problems.join('; ')) : undefined;
}

export interface ScheduleDeps {
  kube: Kube;
  /** ferry's namespace: the Job template and the reconcile Jobs */
  namespace: string;
  /** absent in the sweep, which reports what it did instead */
  log?: Logger;
}

function asksToDeleteBackups(schedule: Schedule | undefined): boolean {
  return schedule?.metadata.annotations?.[scheduleAnnotations.deleteBackups] === 'true';
}

/** What a stored change of a schedule sets off: a reconcile for a generation nobody observed, or its backups' deletion. */
export async function scheduleChanged(change: StoredChange, deps: ScheduleDeps): Promise<void> {
  const before = change.before as Schedule | undefined;
  const after = change.after as Schedule | undefined;
  // gone: the annotation it had when last read decides; being deleted: the one it has now
  const deleted = after
    ? after.metadata.deletionTimestamp !== undefined && asksToDeleteBackups(after)
    : asksToDeleteBackups(before);
  if (deleted) {
    await deleteBackups((after ?? before) as Schedule, deps);
    return;
  }
  if (!after || after.metadata.deletionTimestamp || after.status?.observedGeneration === after.metadata.generation)
    return;
  if (before?.metadata.generation === after.metadata.generation) return;
  await startReconcile(after, deps);
}

/** The reconcile Job of the schedule's generation, from the template; one already there is success. */
export async function startReconcile(schedule: Schedule, deps: ScheduleDeps): Promise<'created' | 'exists'> {
  const { kube, namespace } = deps;
  const template = await kube.get<KubeObject>({ kind: 'CronJob', namespace, name: reconcileTemplate });
  if (!template)
    throw new Error(
      `The Job template CronJob ${namespace}/${reconcileTemplate} does not exist; install jobs/ from ferry's deploy/ kustomization.`,
    );
  const jobTemplate = structuredClone(
    (
      template.spec as {
        jobTemplate?: { metadata?: { labels?: Record<string, string> }; spec?: Record<string, unknown> };
      }
    ).jobTemplate,
  );
  const pod = (
    jobTemplate?.spec?.template as { spec?: { containers?: { name: string; args?: string[] }[] } } | undefined
  )?.spec;
  const container = pod?.containers?.find((c) => c.name === stepContainer);
  if (!jobTemplate?.spec || !container)
    throw new Error(`CronJob ${reconcileTemplate} has no jobTemplate with a container named "${stepContainer}".`);
  const ref = `BackupSchedule/${schedule.metadata.namespace}/${schedule.metadata.name}`;
  container.args = ['schedule', ref];
  const labels = {
    ...jobTemplate.metadata?.labels,
    [scheduleLabels.schedule]: scheduleLabel(schedule.metadata.name),
    [resourceLabels.namespace]: schedule.metadata.namespace ?? '',
  };
  const job: KubeObject = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: reconcileJobName(schedule.metadata.uid ?? '', schedule.metadata.generation ?? 1),
      namespace,
      labels,
      annotations: { [resourceAnnotation]: ref },
    },
    spec: jobTemplate.spec,
  };
  try {
    await kube.create(job);
    deps.log?.info('schedule reconcile Job created', { schedule: ref, job: job.metadata.name });
    return 'created';
  } catch (err) {
    if (isAlreadyExists(err)) return 'exists';
    throw err;
  }
}

async function deleteBackups(schedule: Schedule, deps: ScheduleDeps): Promise<void> {
  const namespace = schedule.metadata.namespace;
  let count = 0;
  // a run makes DataUploads, or one AppBackup whose DataUploads the garbage collector deletes with it
  for (const kind of ['DataUpload', 'AppBackup'] as const) {
    const backups = await deps.kube.list<KubeObject>(kind, {
      namespace,
      labelSelector: scheduleSelector(schedule.metadata.name),
    });
    for (const b of backups)
      await deps.kube.delete({ kind, namespace, name: b.metadata.name }, { uid: b.metadata.uid });
    count += backups.length;
  }
  deps.log?.info('deleted the backups of a deleted schedule', {
    schedule: `${namespace}/${schedule.metadata.name}`,
    count,
  });
}

/** For the sweep: schedules whose generation no reconcile has seen get their reconcile Job (again). */
export async function sweepSchedules(deps: ScheduleDeps): Promise<{ started: string[]; errors: string[] }> {
  const started: string[] = [];
  const errors: string[] = [];
  for (const s of await deps.kube.list<Schedule>('BackupSchedule')) {
    if (s.metadata.deletionTimestamp || s.status?.observedGeneration === s.metadata.generation) continue;
    try {
      if ((await startReconcile(s, deps)) === 'created')
        started.push(`BackupSchedule ${s.metadata.namespace}/${s.metadata.name}`);
    } catch (err) {
      errors.push(
        `BackupSchedule ${s.metadata.namespace}/${s.metadata.name}: ${err instanceof Error ? err.message : String(err)}`,
      );
    }
  }
  return { started, errors };
}
