#!/usr/bin/env node
// `ferry-step <step> <Kind>/<namespace>/<name>` or `ferry-step <step> --sweep`: runs one step in a Job's pod.
// This file only wires things together (Kubernetes access, logger, settings, signals) and reports the outcome
// through the termination message and the exit code: 0 the step did its work or had nothing to do (including
// recording a failure in status), 1 it hit an error the Job or the sweep should retry, 2 bad usage.
import { openBackend } from '../engine/backend/open.ts';
import type { StepName } from '../shared/api/types.ts';
import { connect } from '../shared/kube/connect.ts';
import { createLogger } from '../shared/kube/logger.ts';
import { writeTerminationMessage } from '../shared/kube/termination.ts';
import { sleep } from '../shared/kube/retry.ts';
import type { Outcome, StepContext } from '../steps/context.ts';
import { steps } from '../steps/data/index.ts';
import { maintenanceUsage, parseMaintenanceArgs, runMaintenance, type MaintenanceRequest } from '../steps/maintenance/run.ts';
import { parseResourceRef, runOne, runSweep } from '../steps/data/run.ts';
import { parseScheduleArgs, runScheduleCommand, scheduleUsage, type ScheduleRequest } from '../steps/schedule/command.ts';
import { settingsFromEnv } from '../steps/settings.ts';

const usage = `usage: ferry-step <snapshot|expose|transfer|finalize|delete> (<Kind>/<namespace>/<name> | --sweep)\n   or: ${maintenanceUsage.replace('usage: ', '')}\n   or: ${scheduleUsage}`;

/** Maintenance works on a storage location, not on one resource: its own arguments. */
function maintenanceRequest(argv: string[]): MaintenanceRequest | undefined {
  if (argv[0] !== 'maintenance') return undefined;
  try {
    return parseMaintenanceArgs(argv.slice(1));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    writeTerminationMessage({ outcome: 'Error', reason: (err as Error).message });
    process.exit(2);
  }
}

/** The schedule commands work on a BackupSchedule: their own arguments. */
function scheduleRequest(argv: string[]): ScheduleRequest | undefined {
  try {
    return parseScheduleArgs(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    writeTerminationMessage({ outcome: 'Error', reason: (err as Error).message });
    process.exit(2);
  }
}

async function main(argv: string[]): Promise<number> {
  const [stepArg, target] = argv;
  const maintenance = maintenanceRequest(argv);
  const schedule = scheduleRequest(argv);
  if (!maintenance && !schedule && (!stepArg || !(stepArg in steps) || !target || argv.length !== 2)) {
    process.stderr.write(`${usage}\n`);
    writeTerminationMessage({ outcome: 'Error', reason: usage });
    return 2;
  }
  const step = stepArg as StepName;
  const sweep = target === '--sweep';
  let ref;
  try {
    ref = sweep || maintenance || schedule ? undefined : parseResourceRef(target);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${usage}\n`);
    writeTerminationMessage({ outcome: 'Error', reason: (err as Error).message });
    return 2;
  }
  const log = createLogger(schedule ? { step: schedule.command, resource: target } : maintenance ? { step: 'maintenance', location: maintenance.mode === 'run' ? maintenance.location : 'reconcile' } : { step, resource: sweep ? 'sweep' : target });
  const aborter = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.once(sig, () => aborter.abort(Object.assign(new Error(`stopped by ${sig}`), { name: 'AbortError' })));
  let connection: ReturnType<typeof connect> | undefined;
  try {
    connection = connect(log, { signal: aborter.signal });
    const base: Omit<StepContext, 'step' | 'sweep'> = {
      kube: connection.kube, log,
      ferryNamespace: process.env.FERRY_NAMESPACE || 'ferry-system',
      settings: settingsFromEnv(),
      engine: { openBackend },
      signal: aborter.signal,
      startedAt: new Date(),
      now: () => new Date(),
      sleep,
    };
    const ctx: StepContext = { ...base, step, sweep };
    const outcome: Outcome = schedule ? await runScheduleCommand(base, schedule) : maintenance ? await runMaintenance(base, maintenance) : ref ? await runOne(ctx, steps[step], ref) : await runSweep(ctx, steps[step]);
    log.info(outcome.reason, { outcome: outcome.outcome, counters: outcome.counters });
    writeTerminationMessage({ outcome: outcome.outcome, reason: outcome.reason, counters: outcome.counters });
    // a failed maintenance run fails its Job, so `kubectl get jobs` shows it too (the details are in the location's status)
    if (maintenance || schedule) return outcome.outcome === 'Failed' ? 1 : 0;
    return sweep && (outcome.counters?.errors ?? 0) > 0 ? 1 : 0;
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    log.error(reason, { outcome: 'Error' });
    if (process.env.FERRY_DEBUG === '1' && err instanceof Error) process.stderr.write(`${err.stack}\n`);
    writeTerminationMessage({ outcome: 'Error', reason });
    return 1;
  } finally {
    connection?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
