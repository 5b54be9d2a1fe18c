#!/usr/bin/env node
// `ferry-step <step> <arguments>`: runs one step in a Job's pod, as the step table (src/steps/table.ts) describes
// it. This file only wires things together (Kubernetes access, logger, settings, signals) and reports the outcome
// through the termination message and the exit code: 0 the step did its work or had nothing to do (including
// recording a failure in status), 1 it hit an error the Job or the sweep should retry, 2 bad usage.
import { openBackend } from '../engine/operations/storage.ts';
import { connect } from '../shared/kube/connect.ts';
import { createLogger } from '../shared/kube/logger.ts';
import { writeTerminationMessage } from '../shared/kube/termination.ts';
import { sleep } from '../shared/kube/retry.ts';
import type { StepEnvironment } from '../steps/context.ts';
import type { Invocation } from '../steps/description.ts';
import { settingsFromEnv } from '../steps/settings.ts';
import { findStep, stepUsage } from '../steps/table.ts';

function badUsage(message: string, usage: string): 2 {
  process.stderr.write(`${message}\n${usage}\n`);
  writeTerminationMessage({ outcome: 'Error', reason: message });
  return 2;
}

async function main(argv: string[]): Promise<number> {
  const [name = '', ...args] = argv;
  const step = findStep(name);
  if (!step) return badUsage(name ? `"${name}" is not a step` : 'no step named', stepUsage);
  let invocation: Invocation;
  try {
    invocation = step.parse(args);
  } catch (err) {
    return badUsage((err as Error).message, `usage: ${step.usage}`);
  }
  const log = createLogger(invocation.logFields);
  const aborter = new AbortController();
  for (const sig of ['SIGTERM', 'SIGINT'] as const)
    process.once(sig, () => aborter.abort(Object.assign(new Error(`stopped by ${sig}`), { name: 'AbortError' })));
  let connection: ReturnType<typeof connect> | undefined;
  try {
    connection = connect(log, { signal: aborter.signal });
    const env: StepEnvironment = {
      kube: connection.kube,
      log,
      ferryNamespace: process.env.FERRY_NAMESPACE || 'ferry-system',
      settings: settingsFromEnv(),
      engine: { openBackend },
      signal: aborter.signal,
      startedAt: new Date(),
      now: () => new Date(),
      sleep,
    };
    const outcome = await invocation.run(env);
    log.info(outcome.reason, { outcome: outcome.outcome, counters: outcome.counters });
    writeTerminationMessage({ outcome: outcome.outcome, reason: outcome.reason, counters: outcome.counters });
    return invocation.exitCode(outcome);
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
