// What one resource needs next, decided from its status and its step Jobs alone: nothing, a step Job (with its
// attempt number), a move to Canceling, or giving up. The webhook asks right after a transition and only ever
// starts a step that has no Job yet; the sweep also retries failed Jobs and gives up after the last attempt.
import { canCancel, dueStep, finalizerName } from '../api/phases.ts';
import type { FerryResource, Phase, StepName } from '../api/types.ts';
import { syncedFrom } from '../location/synced.ts';
import { isOurs } from '../step-job/contract.ts';
import { jobsOfStep } from '../step-job/jobs.ts';
import type { StepJob } from '../step-job/jobs.ts';

export type Decision =
  | { action: 'none'; why: string }
  | { action: 'run'; step: StepName; attempt: number }
  | { action: 'cancel'; why: string }
  | { action: 'fail'; step: StepName; phase: Extract<Phase, 'Failing' | 'Failed'>; message: string };

export interface DecideOptions {
  mode: 'admission' | 'sweep';
  /** finished Jobs of one step before the resource is given up (the delete step retries for ever) */
  maxAttempts: number;
  /** ms since the epoch */
  now: number;
  /** a Job that finished this recently may still have its status update on the way */
  settleMs: number;
}

/** Why the resource is to move to Canceling now (a cancel request or a deletion in a phase that allows it), if it is. */
export function cancelReason(resource: FerryResource): string | undefined {
  const deleting = resource.metadata.deletionTimestamp !== undefined;
  if (!(resource.spec.cancel === true || deleting) || !canCancel(resource.status?.phase ?? 'New')) return undefined;
  return resource.spec.cancel === true ? 'spec.cancel is set' : `the ${resource.kind} is being deleted`;
}

function nextAttempt(resource: FerryResource, step: StepName, jobs: readonly StepJob[]): number {
  const recorded = resource.status?.steps?.[step]?.attempts ?? 0;
  return Math.max(recorded, ...jobs.map((j) => j.attempt)) + 1;
}

function giveUp(resource: FerryResource, step: StepName, jobs: readonly StepJob[], phase: Phase): Decision {
  const last = jobs[jobs.length - 1];
  // the step's own record names the failure only when the step recorded one; after a crash (OOM, SIGKILL) it still
  // holds the last progress note, and the Job's failure is the news
  const record = resource.status?.steps?.[step];
  const said =
    record?.outcome === 'Failed'
      ? record.message
      : [last.message, record?.message && `the step had last reported: ${record.message}`].filter(Boolean).join('; ') ||
        undefined;
  const message =
    last.state === 'failed'
      ? `step ${step} failed ${jobs.length} times; the last attempt (Job ${last.name}) said: ${said ?? 'nothing'}`
      : `step ${step} ran ${jobs.length} times without moving the ${resource.kind} on from phase ${phase}`;
  // a finalize that cannot finish has nobody left to clean up after it: the resource ends here
  return { action: 'fail', step, phase: step === 'finalize' ? 'Failed' : 'Failing', message };
}

export function decide(resource: FerryResource, jobs: readonly StepJob[], opts: DecideOptions): Decision {
  if (!isOurs(resource)) return { action: 'none', why: `spec.dataMover is "${resource.spec.dataMover}", not ferry` };
  const phase = resource.status?.phase ?? 'New';
  const deleting = resource.metadata.deletionTimestamp !== undefined;
  // a synced backup's data is in its location already, written by another cluster: only its deletion has work here
  const synced = syncedFrom(resource);
  if (synced && dueStep(resource.kind, { phase, deleting }) !== 'delete')
    return { action: 'none', why: `synced from BackupStorageLocation ${synced}: no step runs but the delete step` };
  const cancel = cancelReason(resource);
  if (cancel) return { action: 'cancel', why: cancel };
  const step = dueStep(resource.kind, { phase, deleting });
  if (!step) return { action: 'none', why: `phase ${phase} needs no step` };
  if (step === 'delete' && !(resource.metadata.finalizers ?? []).includes(finalizerName)) {
    return { action: 'none', why: `no ${finalizerName} finalizer holds the deletion: no repository data to free` };
  }
  const own = jobsOfStep(jobs, resource.metadata.uid ?? '', step);
  const last = own[own.length - 1];
  if (!last) return { action: 'run', step, attempt: nextAttempt(resource, step, own) };
  if (opts.mode === 'admission')
    return { action: 'none', why: `Job ${last.name} exists; the sweep retries it if it fails` };
  if (last.state === 'active') return { action: 'none', why: `Job ${last.name} is running` };
  if (last.finishedAt !== undefined && opts.now - last.finishedAt < opts.settleMs)
    return { action: 'none', why: `Job ${last.name} has just finished` };
  const finished = own.filter((j) => j.state !== 'active');
  if (step !== 'delete' && finished.length >= opts.maxAttempts) return giveUp(resource, step, finished, phase);
  return { action: 'run', step, attempt: nextAttempt(resource, step, own) };
}
