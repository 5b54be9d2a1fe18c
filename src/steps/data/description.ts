// A data step as `ferry-step` runs it: on the resource its Job names, or with --sweep on every resource whose
// phase says the step is due. A sweep that hit errors fails its Job; one resource's outcome, even Failed (which
// the step recorded in status), does not.
import type { StepName } from '../../shared/api/types.ts';
import type { Step } from '../context.ts';
import type { StepDescription } from '../description.ts';
import { parseResourceRef } from '../../shared/step-job/contract.ts';
import { runOne, runSweep } from './run.ts';

export function dataStep(name: StepName, step: Step): StepDescription {
  const usage = `ferry-step ${name} (<Kind>/<namespace>/<name> | --sweep)`;
  return {
    name,
    usage,
    parse(args) {
      if (args.length !== 1 || !args[0])
        throw new Error(`the ${name} step takes one argument, a resource or --sweep; got ${args.length}`);
      const [target] = args;
      const sweep = target === '--sweep';
      const ref = sweep ? undefined : parseResourceRef(target);
      return {
        logFields: { step: name, resource: sweep ? 'sweep' : target },
        run: (env) =>
          ref ? runOne({ ...env, step: name, sweep }, step, ref) : runSweep({ ...env, step: name, sweep }, step),
        exitCode: (outcome) => (sweep && (outcome.counters?.errors ?? 0) > 0 ? 1 : 0),
      };
    },
  };
}
