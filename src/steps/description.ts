// What `ferry-step` knows of a step: its name, its usage line, how its arguments parse and, parsed, how it runs
// to an outcome. The entry point looks the name up in the table (./table.ts) and knows nothing of what a step does.
import type { StepCommand } from '../shared/api/types.ts';
import type { Outcome, StepEnvironment } from './context.ts';

/** A step with its arguments parsed, ready to run. */
export interface Invocation {
  /** what every log line of the run carries: which step, on what */
  logFields: Record<string, string>;
  run(env: StepEnvironment): Promise<Outcome>;
  /** 1 fails the Job (so it retries, and `kubectl get jobs` shows it), 0 the step did its work or had none to do */
  exitCode(outcome: Outcome): 0 | 1;
}

export interface StepDescription {
  name: StepCommand;
  /** one line, without "usage: " */
  usage: string;
  /** The arguments after the name; throws with a message naming what is wrong. */
  parse(args: readonly string[]): Invocation;
}

/** Schedule and maintenance runs record their failures in status and fail their Job too. */
export function failsOnFailed(outcome: Outcome): 0 | 1 {
  return outcome.outcome === 'Failed' ? 1 : 0;
}
