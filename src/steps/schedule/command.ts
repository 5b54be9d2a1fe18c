// The two schedule commands as `ferry-step` runs them, each on one BackupSchedule: `schedule` (started by the
// dispatcher when a schedule changes) makes its run CronJob match it, `schedule-run` (that CronJob's Job) creates
// the DataUploads of one scheduled time. Their context is made from what every step runs with.
import type { Outcome, StepEnvironment } from '../context.ts';
import { failsOnFailed, type StepDescription } from '../description.ts';
import { reconcileSchedule } from './reconcile.ts';
import { parseScheduleRef } from './context.ts';
import type { ScheduleContext, ScheduleRef } from './context.ts';
import { runSchedule } from './run.ts';

function scheduleContext(env: StepEnvironment, command: ScheduleContext['command']): ScheduleContext {
  const poll = Number(process.env.FERRY_SCHEDULE_POLL_MS ?? '');
  return {
    command,
    kube: env.kube,
    log: env.log,
    ferryNamespace: env.ferryNamespace,
    podName: env.settings.podName,
    jobName: env.settings.jobName,
    pollMs: Number.isFinite(poll) && poll > 0 ? poll : 5000,
    signal: env.signal,
    now: env.now,
    sleep: env.sleep,
  };
}

function scheduleCommand(
  name: ScheduleContext['command'],
  run: (ctx: ScheduleContext, ref: ScheduleRef) => Promise<Outcome>,
): StepDescription {
  return {
    name,
    usage: `ferry-step ${name} <namespace>/<name>`,
    parse(args) {
      if (args.length !== 1 || !args[0]) {
        throw new Error(
          `the ${name} command takes one argument, a BackupSchedule as <namespace>/<name>; got ${args.length}`,
        );
      }
      const ref = parseScheduleRef(args[0]);
      return {
        logFields: { step: name, resource: args[0] },
        run: (env) => run(scheduleContext(env, name), ref),
        exitCode: failsOnFailed,
      };
    },
  };
}

export const scheduleStep = scheduleCommand('schedule', reconcileSchedule);

export const scheduleRunStep = scheduleCommand('schedule-run', runSchedule);
