// `ferry-step copy <namespace>/<name>`: the DataCopy step as the step table lists it. One Job per attempt, started
// by the dispatcher; a failed attempt fails its Job (exit 1) after recording when the next one starts.
import { failsOnFailed, type StepDescription } from '../description.ts';
import { parseNamespacedRef } from '../namespaced-ref.ts';
import { runCopy } from './run.ts';

export const copyStep: StepDescription = {
  name: 'copy',
  usage: 'ferry-step copy <namespace>/<name>',
  parse(args) {
    if (args.length !== 1 || !args[0])
      throw new Error(`the copy command takes one argument, a DataCopy as <namespace>/<name>; got ${args.length}`);
    const ref = parseNamespacedRef('DataCopy', args[0]);
    return {
      logFields: { step: 'copy', resource: args[0] },
      run: (env) => runCopy(env, ref),
      exitCode: failsOnFailed,
    };
  },
};
