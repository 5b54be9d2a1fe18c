// Dispatch of DataCopies: each attempt is one step Job (`ferry-step copy <ns>/<name>`, template ferry-step-copy,
// named ferry-copy-<uid>-a<attempt>) mounting the Secrets of both locations, the DataUpload's and the destination's.
// The webhook starts attempt 1 once a creation is stored, and a run when a DataCopy is deleted (its step forgets the
// copy and removes the finalizer) or canceled while no attempt runs; the sweep starts the next attempt once the
// last one failed and status.nextAttemptTime has passed, for as long as the DataCopy is unfinished (copies never
// give up on a transient failure: the step ends Failed itself for what can never work). Under a cluster-wide
// transfer limit a copy moves data like a transfer does: it starts only while running transfers and copies leave
// a slot, oldest first (a deletion or cancel, which moves nothing, never waits).
import type { DataCopy } from '../shared/api/copy.ts';
import { copyTerminalPhases } from '../shared/api/copy.ts';
import type { DataUpload } from '../shared/api/types.ts';
import { parseAppJobs, type AppJob } from '../shared/app/jobs.ts';
import { copyFinalizer, copyJobName, copyStepName, copyTemplateName, retryDelayMs } from '../shared/copy/step.ts';
import { describe } from '../shared/dispatch/status.ts';
import type { StartResult } from '../shared/dispatch/start.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import { mountSecrets, secretsOfLocation } from '../shared/location/mounted-secrets.ts';
import { labels, resourceNameLabel, uidSelector } from '../shared/step-job/contract.ts';
import { stepJobFromTemplate } from '../shared/step-job/job.ts';
import { parseStepJobs } from '../shared/step-job/jobs.ts';
import type { TransferLimits } from './limits.ts';
import type { DispatcherMetrics } from './metrics.ts';
import type { StoredChange } from './stored.ts';
import { startTemplateJob } from './template-job.ts';

export type CopyObject = DataCopy & KubeObject;

/** A Job that finished this recently may still have its last status write on the way. */
const settleMs = 10_000;

export type CopyDecision = { action: 'none'; why: string } | { action: 'run'; attempt: number };

/** What the DataCopy needs now (`now` in ms since the epoch): nothing, or its next attempt. */
export function decideCopy(dc: CopyObject, jobs: readonly AppJob[], now: number): CopyDecision {
  const phase = dc.status?.phase ?? 'New';
  const deleting = dc.metadata.deletionTimestamp !== undefined;
  if (deleting && !(dc.metadata.finalizers ?? []).includes(copyFinalizer))
    return { action: 'none', why: 'being deleted, with nothing left to forget' };
  if (!deleting && copyTerminalPhases.includes(phase)) return { action: 'none', why: `phase ${phase} is final` };
  const own = jobs.filter((j) => j.uid === dc.metadata.uid);
  const active = own.find((j) => j.state === 'active');
  if (active) return { action: 'none', why: `Job ${active.name} is running` };
  const last = own[own.length - 1];
  if (last?.finishedAt !== undefined && now - last.finishedAt < settleMs)
    return { action: 'none', why: `Job ${last.name} has just finished` };
  const attempts = Math.max(dc.status?.attempts ?? 0, ...own.map((j) => j.attempt));
  // a completed copy being deleted whose snapshot S3 Object Lock still retains: its step said when to come back
  const retainedUntil = deleting && phase === 'Completed' ? dc.status?.nextAttemptTime : undefined;
  if (retainedUntil && now < Date.parse(retainedUntil))
    return { action: 'none', why: `its copy is retained until ${retainedUntil}` };
  // a deletion or a cancel does not wait for the retry time of failed attempts
  if (!deleting && !dc.spec.cancel && attempts > 0) {
    const recorded = dc.status?.nextAttemptTime ? Date.parse(dc.status.nextAttemptTime) : undefined;
    // an attempt that died before it could record its failure (killed, out of memory) waits as a failure would
    const due = recorded ?? (last?.finishedAt ?? 0) + retryDelayMs(attempts);
    if (now < due) return { action: 'none', why: `the next attempt is due at ${new Date(due).toISOString()}` };
  }
  return { action: 'run', attempt: attempts + 1 };
}

export interface CopyDeps {
  kube: Kube;
  /** the cluster-wide transfer limit counts copies too */
  limits?: TransferLimits;
  /** ferry's namespace: the template, the locations and the Jobs */
  namespace: string;
  log: Logger;
  now: () => Date;
  metrics?: DispatcherMetrics;
}

export function parseCopyJobs(jobs: readonly KubeObject[]): AppJob[] {
  return parseAppJobs(jobs, [copyStepName]);
}

async function copyJobsOf(deps: CopyDeps, uid: string): Promise<AppJob[]> {
  return parseCopyJobs(
    await deps.kube.list<KubeObject>('Job', { namespace: deps.namespace, labelSelector: uidSelector(uid) }),
  );
}

/** The Secrets of both locations: the DataUpload's (the source) and the destination's. */
async function secretsOfCopy(deps: CopyDeps, dc: CopyObject): Promise<string[]> {
  const du = await deps.kube.get<DataUpload & KubeObject>({
    kind: 'DataUpload',
    namespace: dc.metadata.namespace,
    name: dc.spec.dataUpload,
  });
  const locations = [dc.spec.backupStorageLocation, ...(du ? [du.spec.backupStorageLocation] : [])];
  const names = await Promise.all(locations.map((l) => secretsOfLocation(deps.kube, deps.namespace, l)));
  return [...new Set(names.flat())];
}

/** The Job of one attempt, from the template CronJob, with both locations' Secrets mounted. */
export function buildCopyJob(
  cronJob: KubeObject,
  dc: CopyObject,
  attempt: number,
  namespace: string,
  secrets: string[],
): KubeObject {
  const ref = `${dc.metadata.namespace}/${dc.metadata.name}`;
  const { job, pod, container } = stepJobFromTemplate(cronJob, {
    name: copyJobName(dc.metadata.uid ?? '', attempt),
    namespace,
    args: [copyStepName, ref],
    attempt,
    labels: {
      [labels.kind]: 'DataCopy',
      [labels.name]: resourceNameLabel(dc.metadata.name),
      [labels.namespace]: dc.metadata.namespace ?? '',
      [labels.uid]: dc.metadata.uid ?? '',
      [labels.step]: copyStepName,
      [labels.attempt]: String(attempt),
    },
    resource: `DataCopy/${ref}`,
  });
  if (secrets.length > 0) mountSecrets(pod, container, secrets);
  return job;
}

/** Creates the attempt's Job; a Job of that name already there is success. */
export function startCopyJob(deps: CopyDeps, dc: CopyObject, attempt: number): Promise<StartResult> {
  const step = { name: copyStepName, template: copyTemplateName };
  return startTemplateJob(deps, dc, step, async (cronJob) =>
    buildCopyJob(cronJob, dc, attempt, deps.namespace, await secretsOfCopy(deps, dc)),
  );
}

/** A stored creation, deletion or cancel starts the step when none of its attempts runs. */
export async function copyChanged(change: StoredChange, deps: CopyDeps): Promise<CopyDecision | undefined> {
  const after = change.after as CopyObject | undefined;
  if (!after) return undefined;
  const before = change.before as CopyObject | undefined;
  const deletionStarted = after.metadata.deletionTimestamp !== undefined && !before?.metadata.deletionTimestamp;
  const cancelStarted = after.spec.cancel === true && before?.spec.cancel !== true;
  if (before && !deletionStarted && !cancelStarted) return undefined;
  const decision = decideCopy(after, await copyJobsOf(deps, after.metadata.uid ?? ''), deps.now().getTime());
  if (decision.action !== 'run') return decision;
  if (movesData(after)) {
    const free = freeSlots(
      deps.limits,
      await deps.kube.list<KubeObject>('Job', { namespace: deps.namespace, labelSelector: labels.uid }),
    );
    if (free <= 0) return { action: 'none', why: 'every transfer slot of the cluster is taken; the sweep starts it' };
  }
  await startCopyJob(deps, after, decision.attempt);
  return decision;
}

/** A run that copies: not one that only forgets (deletion) or stops (cancel). */
function movesData(dc: CopyObject): boolean {
  return !dc.metadata.deletionTimestamp && !dc.spec.cancel;
}

/** How many copies may start now under the cluster-wide transfer limit (no limit: as many as want to). */
export function freeSlots(limits: TransferLimits | undefined, jobObjects: readonly KubeObject[]): number {
  if (!limits || limits.cluster <= 0) return Infinity;
  const transfers = parseStepJobs(jobObjects).filter((j) => j.step === 'transfer' && j.state === 'active').length;
  const copies = parseCopyJobs(jobObjects).filter((j) => j.state === 'active').length;
  return limits.cluster - transfers - copies;
}

export interface CopySweep {
  /** every DataCopy seen: their Jobs are not orphans */
  resources: CopyObject[];
  dispatched: string[];
  /** copies due whose turn has not come under the transfer limit */
  waiting: string[];
  errors: string[];
}

/** One pass of the sweep over every DataCopy, with the step Jobs listed before them. */
export async function sweepCopies(deps: CopyDeps, jobObjects: readonly KubeObject[]): Promise<CopySweep> {
  const jobs = parseCopyJobs(jobObjects);
  const resources = await deps.kube.list<CopyObject>('DataCopy');
  const report: CopySweep = { resources, dispatched: [], waiting: [], errors: [] };
  const now = deps.now().getTime();
  let free = freeSlots(deps.limits, jobObjects);
  const oldestFirst = [...resources].sort((a, b) =>
    (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? ''),
  );
  for (const dc of oldestFirst) {
    const decision = decideCopy(dc, jobs, now);
    if (decision.action !== 'run') continue;
    if (movesData(dc) && free-- <= 0) {
      report.waiting.push(`${describe(dc)}: every transfer slot of the cluster is taken`);
      continue;
    }
    try {
      await startCopyJob(deps, dc, decision.attempt);
      report.dispatched.push(`${describe(dc)}: copy attempt ${decision.attempt}`);
    } catch (err) {
      report.errors.push(`${describe(dc)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return report;
}
