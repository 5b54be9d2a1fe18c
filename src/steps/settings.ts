// Step settings from the environment the Job template gives the pod, each with a default that fits the design.
import type { StepSettings } from './context.ts';

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
  const podName = env.FERRY_POD_NAME || env.HOSTNAME || 'ferry-step';
  return {
    podName,
    jobName: env.FERRY_JOB_NAME || jobOfPod(podName),
    nodeName: env.FERRY_NODE_NAME || env.NODE_NAME || undefined,
    volumePath: env.FERRY_VOLUME_PATH || '/ferry/volume',
    devicePath: env.FERRY_DEVICE_PATH || '/ferry/device',
    phaseWaitMs: number(env, 'FERRY_PHASE_WAIT_MS', 10_000),
    pollMs: number(env, 'FERRY_POLL_MS', 1000),
    progressMs: number(env, 'FERRY_PROGRESS_MS', 3000),
    lockWaitMs: number(env, 'FERRY_LOCK_WAIT_MS', 10 * 60_000),
  };
}
