// The command line of the two schedule commands, and the context they run in, made from what the step entry
// already has (Kubernetes access, logger, signal, clock, settings).
import type { Outcome, StepContext } from '../context.ts';
import { reconcileSchedule } from './reconcile.ts';
import { parseScheduleRef } from './context.ts';
import type { ScheduleContext, ScheduleRef } from './context.ts';
import { runSchedule } from './run.ts';

export const scheduleUsage = 'ferry-step <schedule|schedule-run> <namespace>/<name>';

export interface ScheduleRequest {
  command: ScheduleContext['command'];
  ref: ScheduleRef;
}

/** The request when argv names a schedule command, undefined when it names another step; throws on bad usage. */
export function parseScheduleArgs(argv: readonly string[]): ScheduleRequest | undefined {
  const [command, target] = argv;
  if (command !== 'schedule' && command !== 'schedule-run') return undefined;
  if (!target || argv.length !== 2) throw new Error(`usage: ${scheduleUsage}`);
  return { command, ref: parseScheduleRef(target) };
}

export function runScheduleCommand(base: Omit<StepContext, 'step' | 'sweep'>, req: ScheduleRequest, env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  const poll = Number(env.FERRY_SCHEDULE_POLL_MS ?? '');
  const ctx: ScheduleContext = {
    command: req.command,
    kube: base.kube,
    log: base.log,
    ferryNamespace: base.ferryNamespace,
    podName: base.settings.podName,
    jobName: base.settings.jobName,
    pollMs: Number.isFinite(poll) && poll > 0 ? poll : 5000,
    signal: base.signal,
    now: base.now,
    sleep: base.sleep,
  };
  return req.command === 'schedule' ? reconcileSchedule(ctx, req.ref) : runSchedule(ctx, req.ref);
}
