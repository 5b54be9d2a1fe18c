// `ferry-step app-restore <namespace>/<name>`: the step Job the dispatcher starts for an AppRestore. Its context is
// made from what every step runs with; FERRY_APP_POLL_MS (default 3000) sets how often it looks at its
// DataDownloads.
import type { Outcome, StepEnvironment } from '../context.ts';
import { failsOnFailed, type StepDescription } from '../description.ts';
import { parseNamespacedRef } from '../namespaced-ref.ts';
import type { RestoreContext } from './restore-context.ts';
import { runAppRestore } from './restore.ts';

const defaultPollMs = 3000;

function restoreContext(env: StepEnvironment): RestoreContext {
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

export const appRestoreStep: StepDescription = {
  name: 'app-restore',
  usage: 'ferry-step app-restore <namespace>/<name>',
  parse(args) {
    if (args.length !== 1 || !args[0])
      throw new Error(
        `the app-restore command takes one argument, an AppRestore as <namespace>/<name>; got ${args.length}`,
      );
    const ref = parseNamespacedRef('AppRestore', args[0]);
    return {
      logFields: { step: 'app-restore', resource: args[0] },
      run: (env): Promise<Outcome> => runAppRestore(restoreContext(env), ref),
      exitCode: failsOnFailed,
    };
  },
};
