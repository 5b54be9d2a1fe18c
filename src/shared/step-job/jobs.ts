// A step Job as the dispatcher, the sweep and the CLI see it: which resource, step and attempt it serves (from its labels)
// and whether it is still running, done or failed (from its status conditions).
import { isStepName, type StepName } from '../api/types.ts';
import type { KubeObject } from '../kube/kube.ts';
import { hostnameLabel, labels } from './contract.ts';

export type JobState = 'active' | 'succeeded' | 'failed';

export interface StepJob {
  name: string;
  uid: string;
  step: StepName;
  attempt: number;
  state: JobState;
  created: string;
  /** ms since the epoch, when finished */
  finishedAt?: number;
  /** why it failed, as the Job controller says */
  message?: string;
  /** node the Job was pinned to, if any */
  node?: string;
}

export interface JobStatus {
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
  completionTime?: string;
}

/** Whether a Job runs, succeeded or failed, from its status conditions; when it ended and why it failed. */
export function jobState(status: JobStatus | undefined): { state: JobState; at?: string; message?: string } {
  for (const c of status?.conditions ?? []) {
    if (c.status !== 'True') continue;
    if (c.type === 'Complete') return { state: 'succeeded', at: status?.completionTime ?? c.lastTransitionTime };
    if (c.type === 'Failed')
      return { state: 'failed', at: c.lastTransitionTime, message: [c.reason, c.message].filter(Boolean).join(': ') };
  }
  return { state: 'active' };
}

/** The Job as a step Job, or undefined when its labels do not make it one. */
export function stepJob(job: KubeObject): StepJob | undefined {
  const l = job.metadata.labels ?? {};
  const step = l[labels.step];
  const attempt = Number(l[labels.attempt]);
  if (!step || !isStepName(step) || !Number.isInteger(attempt) || attempt < 1 || !l[labels.uid]) return undefined;
  const done = jobState(job.status as JobStatus | undefined);
  const node = (job.spec as { template?: { spec?: { nodeSelector?: Record<string, string> } } } | undefined)?.template
    ?.spec?.nodeSelector?.[hostnameLabel];
  return {
    name: job.metadata.name,
    uid: l[labels.uid],
    step,
    attempt,
    state: done.state,
    created: job.metadata.creationTimestamp ?? '',
    finishedAt: done.at ? Date.parse(done.at) : undefined,
    message: done.message,
    node,
  };
}

/** The Jobs of one step, by attempt. */
export function jobsOfStep(jobs: readonly StepJob[], uid: string, step: StepName): StepJob[] {
  return jobs.filter((j) => j.uid === uid && j.step === step).sort((a, b) => a.attempt - b.attempt);
}

export function parseStepJobs(jobs: readonly KubeObject[]): StepJob[] {
  return jobs.map(stepJob).filter((j): j is StepJob => j !== undefined);
}
