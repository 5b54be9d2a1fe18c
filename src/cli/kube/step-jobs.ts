// The step Jobs that ran for a resource, found in ferry's namespace by the resource's uid label, in step order
// (then attempt), each with its pods: how they ended, the step's termination message, and where to read logs.
import { uidSelector } from '../../shared/step-job/contract.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { parseStepJobs, type StepJob } from '../../shared/step-job/jobs.ts';
import { stepNames } from '../../shared/api/types.ts';
import type { Resource } from './kinds.ts';

export interface PodRun {
  name: string;
  phase: string;
  /** exit code and reason of the step container, once it ended */
  exitCode?: number;
  reason?: string;
  /** what the step wrote to /dev/termination-log (outcome, reason, counters), as it wrote it */
  terminationMessage?: string;
  startedAt?: string;
  finishedAt?: string;
}

export interface JobRun extends StepJob {
  pods: PodRun[];
}

interface PodObject extends KubeObject {
  status?: {
    phase?: string;
    startTime?: string;
    containerStatuses?: {
      name: string;
      state?: {
        terminated?: { exitCode?: number; reason?: string; message?: string; startedAt?: string; finishedAt?: string };
        running?: { startedAt?: string };
      };
      lastState?: { terminated?: { exitCode?: number; reason?: string; message?: string } };
    }[];
  };
}

function podRun(pod: PodObject): PodRun {
  const c = pod.status?.containerStatuses?.find((s) => s.name === 'step') ?? pod.status?.containerStatuses?.[0];
  const ended = c?.state?.terminated;
  return {
    name: pod.metadata.name,
    phase: pod.status?.phase ?? 'Pending',
    exitCode: ended?.exitCode,
    reason: ended?.reason,
    terminationMessage: ended?.message?.trim() || undefined,
    startedAt: ended?.startedAt ?? c?.state?.running?.startedAt ?? pod.status?.startTime,
    finishedAt: ended?.finishedAt,
  };
}

function jobOfPod(pod: KubeObject): string | undefined {
  const l = pod.metadata.labels ?? {};
  return l['batch.kubernetes.io/job-name'] ?? l['job-name'];
}

export async function stepJobsOf(kube: Kube, ferryNamespace: string, r: Resource): Promise<JobRun[]> {
  const selector = uidSelector(r.metadata.uid ?? '');
  const [jobs, pods] = await Promise.all([
    kube.list<KubeObject>('Job', { namespace: ferryNamespace, labelSelector: selector }),
    kube.list<PodObject>('Pod', { namespace: ferryNamespace, labelSelector: selector }),
  ]);
  return parseStepJobs(jobs)
    .sort((a, b) => stepNames.indexOf(a.step) - stepNames.indexOf(b.step) || a.attempt - b.attempt)
    .map((j) => ({
      ...j,
      pods: pods
        .filter((p) => jobOfPod(p) === j.name)
        .map(podRun)
        .sort((a, b) => (a.startedAt ?? '').localeCompare(b.startedAt ?? '')),
    }));
}
