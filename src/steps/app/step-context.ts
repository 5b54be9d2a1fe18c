// What the app-backup and app-restore steps share: the context every long-running step builds from the step
// environment (with its poll interval, FERRY_APP_POLL_MS, default 3 s), the one-argument `<namespace>/<name>`
// command both take, and Events about the resource they drive, whose failure is logged and never fatal.
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { Kube } from '../../shared/kube/kube.ts';
import type { Logger } from '../../shared/kube/logger.ts';
import { emitEvent } from '../../shared/kube/events.ts';
import type { Outcome, StepEnvironment } from '../context.ts';
import { failsOnFailed, type StepDescription } from '../description.ts';
import { parseNamespacedRef, type NamespacedRef } from '../namespaced-ref.ts';

export interface PollingContext {
  kube: Kube;
  log: Logger;
  /** ferry's namespace: the storage locations */
  ferryNamespace: string;
  podName: string;
  /** how often the step looks at what it waits for (snapshots, DataUploads, DataDownloads) and at spec.cancel */
  pollMs: number;
  /** SIGTERM of the pod: stop where it is; the next attempt resumes from status */
  signal: AbortSignal;
  now(): Date;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

const defaultPollMs = 3000;

export function pollingContext(env: StepEnvironment): PollingContext {
  const poll = Number(process.env.FERRY_APP_POLL_MS ?? '');
  return {
    kube: env.kube,
    log: env.log,
    ferryNamespace: env.ferryNamespace,
    podName: env.settings.podName,
    pollMs: Number.isFinite(poll) && poll > 0 ? poll : defaultPollMs,
    signal: env.signal,
    now: env.now,
    sleep: env.sleep,
  };
}

/** The step `ferry-step <name> <namespace>/<name>` driving one `kind` object with `run`. */
export function namespacedStep(
  name: 'app-backup' | 'app-restore',
  kind: 'AppBackup' | 'AppRestore',
  run: (env: StepEnvironment, ref: NamespacedRef) => Promise<Outcome>,
): StepDescription {
  return {
    name,
    usage: `ferry-step ${name} <namespace>/<name>`,
    parse(args) {
      if (args.length !== 1 || !args[0])
        throw new Error(`the ${name} command takes one argument, an ${kind} as <namespace>/<name>; got ${args.length}`);
      const ref = parseNamespacedRef(kind, args[0]);
      return {
        logFields: { step: name, resource: args[0] },
        run: (env) => run(env, ref),
        exitCode: failsOnFailed,
      };
    },
  };
}

export interface StepEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  note: string;
}

/** An Event about `obj` from the step `controller`; a failure to write it is logged, never fatal. */
export async function stepEvent(
  ctx: Pick<PollingContext, 'kube' | 'log' | 'podName' | 'now'>,
  obj: KubeObject,
  ev: StepEvent,
  by: { action: string; controller: string },
): Promise<void> {
  try {
    await emitEvent(
      ctx.kube,
      obj,
      { ...ev, action: by.action },
      { controller: by.controller, instance: ctx.podName },
      ctx.now(),
    );
  } catch (err) {
    ctx.log.warn('could not record an Event', { reason: ev.reason, error: (err as Error).message });
  }
}
