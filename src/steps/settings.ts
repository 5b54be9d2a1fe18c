// Step settings from the environment the Job gives the pod (the step-Job contract's names), each with a default
// that fits the design.
import { mounts, stepEnv } from '../shared/step-job/contract.ts';
import type { StepSettings } from './context.ts';

/** The dispatcher's attempt number; a Job made by hand (`kubectl create job --from=cronjob/...`) has none. */
function attempt(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env[stepEnv.attempt];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${stepEnv.attempt}="${raw}" is not an attempt number (1, 2, ...).`);
  return n;
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}="${raw}" is not a number of milliseconds.`);
  return n;
}

/** A Job's pods are named `<job>-<5 characters>`. */
export function jobOfPod(pod: string): string | undefined {
  const m = /^(.+)-[a-z0-9]{5}$/.exec(pod);
  return m?.[1];
}

export function settingsFromEnv(env: NodeJS.ProcessEnv = process.env): StepSettings {
  const podName = env[stepEnv.podName] || env.HOSTNAME || 'ferry-step';
  return {
    podName,
    jobName: env[stepEnv.jobName] || jobOfPod(podName),
    attempt: attempt(env),
    nodeName: env[stepEnv.nodeName] || env.NODE_NAME || undefined,
    volumePath: env[stepEnv.volumePath] || mounts.volumePath,
    devicePath: env[stepEnv.devicePath] || mounts.devicePath,
    phaseWaitMs: number(env, 'FERRY_PHASE_WAIT_MS', 10_000),
    pollMs: number(env, 'FERRY_POLL_MS', 1000),
    progressMs: number(env, 'FERRY_PROGRESS_MS', 3000),
    lockWaitMs: number(env, 'FERRY_LOCK_WAIT_MS', 10 * 60_000),
  };
}
