// The step Job of an AppBackup or AppRestore: ONE long-running Job per attempt (`ferry-step app-backup <ns>/<name>`)
// that drives the resource's whole life, made from the suspended template CronJob ferry-step-app-backup (or
// -app-restore) in ferry's namespace, read at dispatch time so an edit in Git applies to the next Job. It carries
// the step-Job contract's labels, so `kubectl get jobs -l ferry.dev/uid=<uid>` and ferry's tools find it; the name
// says the attempt, which is how the sweep counts them.
import type { AppBackup, AppKind, AppRestore } from '../api/app.ts';
import type { KubeObject } from '../kube/kube.ts';
import { stepJobFromTemplate } from '../step-job/job.ts';
import { jobState } from '../step-job/jobs.ts';
import type { JobState, JobStatus } from '../step-job/jobs.ts';
import { labels, resourceNameLabel } from '../step-job/contract.ts';

export type AppResource = (AppBackup | AppRestore) & KubeObject;

/** The `ferry-step` command of each kind. */
export const appStepOf = { AppBackup: 'app-backup', AppRestore: 'app-restore' } as const satisfies Record<
  AppKind,
  string
>;

export type AppStep = (typeof appStepOf)[AppKind];

/** The template CronJob (jobs/app-backup.yaml, jobs/app-restore.yaml), also the step's ServiceAccount. */
export function appTemplateName(kind: AppKind): string {
  return `ferry-step-${appStepOf[kind]}`;
}

/** Deterministic: the same resource and attempt always give the same name (at most 63 characters). */
export function appJobName(uid: string, attempt: number): string {
  return `ferry-app-${uid.replaceAll('-', '').slice(0, 16)}-a${attempt}`;
}

/** `<namespace>/<name>`: the step's argument. */
export function appRef(r: AppResource): string {
  return `${r.metadata.namespace}/${r.metadata.name}`;
}

function appJobLabels(r: AppResource, attempt: number): Record<string, string> {
  return {
    [labels.kind]: r.kind,
    [labels.name]: resourceNameLabel(r.metadata.name),
    [labels.namespace]: r.metadata.namespace ?? '',
    [labels.uid]: r.metadata.uid ?? '',
    [labels.step]: appStepOf[r.kind],
    [labels.attempt]: String(attempt),
  };
}

/** The Job of one attempt, from the template CronJob. */
export function buildAppJob(cronJob: KubeObject, r: AppResource, attempt: number, namespace: string): KubeObject {
  return stepJobFromTemplate(cronJob, {
    name: appJobName(r.metadata.uid ?? '', attempt),
    namespace,
    args: [appStepOf[r.kind], appRef(r)],
    attempt,
    labels: appJobLabels(r, attempt),
    resource: `${r.kind}/${appRef(r)}`,
  }).job;
}

/** An attempt's Job as the dispatcher sees it. */
export interface AppJob {
  name: string;
  uid: string;
  attempt: number;
  state: JobState;
  /** ms since the epoch, when finished */
  finishedAt?: number;
  message?: string;
}

/**
 * The Jobs of AppBackups and AppRestores among `jobs` (others are left out), by attempt; with `steps`, the Jobs of
 * those steps instead (a DataCopy's are made the same way).
 */
export function parseAppJobs(
  jobs: readonly KubeObject[],
  steps: readonly string[] = Object.values(appStepOf),
): AppJob[] {
  const found: AppJob[] = [];
  for (const job of jobs) {
    const l = job.metadata.labels ?? {};
    const attempt = Number(l[labels.attempt]);
    if (!steps.includes(l[labels.step] ?? '') || !l[labels.uid] || !Number.isInteger(attempt) || attempt < 1) continue;
    const done = jobState(job.status as JobStatus | undefined);
    found.push({
      name: job.metadata.name,
      uid: l[labels.uid],
      attempt,
      state: done.state,
      finishedAt: done.at ? Date.parse(done.at) : undefined,
      message: done.message,
    });
  }
  return found.sort((a, b) => a.attempt - b.attempt);
}
