// Dispatch of AppBackups and AppRestores: each is driven by one long-running step Job at a time (../shared/app/
// jobs.ts), resumable from its status. The webhook starts the first attempt once a creation is stored, and starts one
// when an unfinished resource is deleted or canceled and no attempt runs (its step cancels and cleans up); the sweep
// starts the next attempt when the resource still needs its step and no Job of it is running, and after the last
// attempt writes phase Failed with what the last Job said. Like the rest of the dispatcher, every decision comes from
// the resource and its Jobs as the cluster shows them.
import { appBackupFinalizer } from '../shared/app/names.ts';
import { appStepOf, appTemplateName, buildAppJob, parseAppJobs } from '../shared/app/jobs.ts';
import type { AppJob, AppResource } from '../shared/app/jobs.ts';
import { isAppTerminal } from '../shared/app/phases.ts';
import { rfc3339 } from '../shared/kube/conditions.ts';
import type { Kube, KubeObject } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';
import { describe, writeResource } from '../shared/dispatch/status.ts';
import type { StartResult } from '../shared/dispatch/start.ts';
import { uidSelector } from '../shared/step-job/contract.ts';
import type { DispatcherMetrics } from './metrics.ts';
import type { StoredChange } from './stored.ts';
import { startTemplateJob } from './template-job.ts';

/** Attempts (Jobs) of an unfinished resource before the sweep gives it up. */
export const appMaxAttempts = 5;
/** A Job that finished this recently may still have its last status write on the way. */
const settleMs = 10_000;

export type AppDecision =
  { action: 'none'; why: string } | { action: 'run'; attempt: number } | { action: 'fail'; message: string };

export interface AppDecideOptions {
  /** only the sweep gives a resource up */
  mode: 'admission' | 'sweep';
  maxAttempts: number;
  /** ms since the epoch */
  now: number;
}

function giveUpMessage(r: AppResource, own: readonly AppJob[]): string {
  const last = own[own.length - 1];
  const step = appStepOf[r.kind];
  return last.state === 'failed'
    ? `step ${step} failed ${own.length} times; the last attempt (Job ${last.name}) said: ${last.message || 'nothing'}`
    : `step ${step} ran ${own.length} times without finishing the ${r.kind} (phase ${r.status?.phase ?? 'New'})`;
}

/** What the resource needs now: nothing, the next attempt of its step Job, or to be given up. */
export function decideApp(r: AppResource, jobs: readonly AppJob[], opts: AppDecideOptions): AppDecision {
  const phase = r.status?.phase ?? 'New';
  const deleting = r.metadata.deletionTimestamp !== undefined;
  const terminal = isAppTerminal(r.kind, phase);
  // an AppBackup's finalizer means its step still owes something, whatever its phase says: post hooks (after the
  // sweep gave it up between the hooks), cancels or clean-up; the step removes it last
  const held = r.kind === 'AppBackup' && (r.metadata.finalizers ?? []).includes(appBackupFinalizer);
  if (terminal && !held) return { action: 'none', why: `phase ${phase} is final` };
  const own = jobs.filter((j) => j.uid === r.metadata.uid);
  const active = own.find((j) => j.state === 'active');
  if (active) return { action: 'none', why: `Job ${active.name} is running` };
  const last = own[own.length - 1];
  if (last?.finishedAt !== undefined && opts.now - last.finishedAt < settleMs)
    return { action: 'none', why: `Job ${last.name} has just finished` };
  // a deletion or the clean-up of a finished one is retried for ever, as the delete step of a DataUpload is: giving
  // up would leave it stuck, or the application quiesced
  if (!deleting && !terminal && own.length >= opts.maxAttempts) {
    return opts.mode === 'sweep'
      ? { action: 'fail', message: giveUpMessage(r, own) }
      : { action: 'none', why: `${own.length} attempts failed; the sweep gives it up` };
  }
  return { action: 'run', attempt: Math.max(0, ...own.map((j) => j.attempt)) + 1 };
}

export interface AppDeps {
  kube: Kube;
  /** ferry's namespace: the templates and the Jobs */
  namespace: string;
  log: Logger;
  now: () => Date;
  /** name of this process in Events */
  instance: string;
  metrics?: DispatcherMetrics;
}

/** The step Jobs of one resource. */
export async function appJobsOf(deps: Pick<AppDeps, 'kube' | 'namespace'>, uid: string): Promise<AppJob[]> {
  return parseAppJobs(
    await deps.kube.list<KubeObject>('Job', { namespace: deps.namespace, labelSelector: uidSelector(uid) }),
  );
}

/** Creates the attempt's Job from its template; a Job of that name already there is success. */
export function startAppJob(deps: AppDeps, r: AppResource, attempt: number): Promise<StartResult> {
  const step = { name: appStepOf[r.kind], template: appTemplateName(r.kind) };
  return startTemplateJob(deps, r, step, (cronJob) => buildAppJob(cronJob, r, attempt, deps.namespace));
}

/** Phase Failed with the reason, if the resource is still unfinished in the phase the decision saw. */
export async function giveUpApp(deps: AppDeps, r: AppResource, message: string): Promise<void> {
  const phaseThen = r.status?.phase;
  await writeResource<AppResource>(
    deps,
    r,
    (fresh) => {
      if (fresh.status?.phase !== phaseThen || isAppTerminal(fresh.kind, fresh.status?.phase)) return false;
      fresh.status = { ...fresh.status, phase: 'Failed', message, completionTimestamp: rfc3339(deps.now()) };
    },
    { type: 'Warning', reason: 'Failed', note: message, action: 'GiveUp' },
  );
}

/**
 * What a stored change sets off: the first attempt of a new resource, and the step of an unfinished one deleted or
 * canceled while none of its attempts runs (a running one sees that itself).
 */
export async function appChanged(change: StoredChange, deps: AppDeps): Promise<AppDecision | undefined> {
  const after = change.after as AppResource | undefined;
  if (!after) return undefined;
  const before = change.before as AppResource | undefined;
  const deletionStarted = after.metadata.deletionTimestamp !== undefined && !before?.metadata.deletionTimestamp;
  const cancelStarted = after.spec.cancel === true && before?.spec.cancel !== true;
  if (before && !deletionStarted && !cancelStarted) return undefined;
  const decision = decideApp(after, await appJobsOf(deps, after.metadata.uid ?? ''), {
    mode: 'admission',
    maxAttempts: appMaxAttempts,
    now: deps.now().getTime(),
  });
  if (decision.action === 'run') await startAppJob(deps, after, decision.attempt);
  return decision;
}

export interface AppSweep {
  /** every AppBackup and AppRestore seen: their Jobs are not orphans */
  resources: AppResource[];
  dispatched: string[];
  failed: string[];
  errors: string[];
}

/** One pass of the sweep over every AppBackup and AppRestore, with the step Jobs listed before them. */
export async function sweepApps(deps: AppDeps, jobObjects: readonly KubeObject[]): Promise<AppSweep> {
  const jobs = parseAppJobs(jobObjects);
  const [backups, restores] = await Promise.all([
    deps.kube.list<AppResource>('AppBackup'),
    deps.kube.list<AppResource>('AppRestore'),
  ]);
  const report: AppSweep = { resources: [...backups, ...restores], dispatched: [], failed: [], errors: [] };
  const opts: AppDecideOptions = { mode: 'sweep', maxAttempts: appMaxAttempts, now: deps.now().getTime() };
  for (const r of report.resources) {
    const decision = decideApp(r, jobs, opts);
    try {
      if (decision.action === 'run') {
        await startAppJob(deps, r, decision.attempt);
        report.dispatched.push(`${describe(r)}: ${appStepOf[r.kind]} attempt ${decision.attempt}`);
      } else if (decision.action === 'fail') {
        await giveUpApp(deps, r, decision.message);
        report.failed.push(`${describe(r)}: ${decision.message}`);
      }
    } catch (err) {
      report.errors.push(`${describe(r)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return report;
}
