// What every step receives: the Kubernetes access, a logger bound to its resource, where ferry lives, the
// clock and sleep (replaceable in tests), and the engine's entry to storage. A step returns an Outcome, which the
// runner turns into the pod's termination message and exit code.
import type { InitOptions } from '../engine/operations/open.ts';
import type { Backend, OpenOptions } from '../engine/operations/storage.ts';
import type { FerryResource, StepName } from '../shared/api/types.ts';
import type { Kube } from '../shared/kube/kube.ts';
import type { Logger } from '../shared/kube/logger.ts';

export interface StepSettings {
  /** the pod (or process) reporting events */
  podName: string;
  /** the Job running this step, recorded in status.steps */
  jobName?: string;
  /** which attempt of the step the Job is (FERRY_ATTEMPT), recorded in status.steps; absent in a Job made by hand */
  attempt?: number;
  /** the node the pod runs on (downward API), recorded as status.node by transfer */
  nodeName?: string;
  /** where the transfer pod mounts a filesystem volume, and a block volume */
  volumePath: string;
  devicePath: string;
  /** how long a step waits for its resource to reach its phase before doing nothing */
  phaseWaitMs: number;
  /** how often a step looks at objects it waits for (snapshots, PVCs) and at spec.cancel */
  pollMs: number;
  /** how often transfer writes status.progress */
  progressMs: number;
  /** how long a step's repository operation waits while another holder's lock conflicts with its own */
  lockWaitMs: number;
}

export interface Engine {
  openBackend(location: string, opts: OpenOptions): Backend;
  /** scrypt and chunker settings for repositories the transfer step creates (tests make them cheap) */
  init?: InitOptions;
}

export interface StepContext {
  step: StepName;
  kube: Kube;
  log: Logger;
  /** ferry's own namespace: storage locations, step Jobs and exposure objects */
  ferryNamespace: string;
  /** running for every due resource (`--sweep`) rather than one named resource */
  sweep: boolean;
  settings: StepSettings;
  engine: Engine;
  /** SIGTERM of the pod: stop, leave the phase as it is, let the Job or the sweep run the step again */
  signal: AbortSignal;
  startedAt: Date;
  now(): Date;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** What every step runs with, whether it works on a resource, a schedule or a storage location. */
export type StepEnvironment = Omit<StepContext, 'step' | 'sweep'>;

export type OutcomeKind = 'Advanced' | 'Waiting' | 'Skipped' | 'Failed' | 'Canceled';

export interface Outcome {
  outcome: OutcomeKind;
  /** one sentence */
  reason: string;
  counters?: Record<string, number>;
}

export type Step = (ctx: StepContext, resource: FerryResource) => Promise<Outcome>;
