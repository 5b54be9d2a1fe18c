// `ferry-step app-restore <namespace>/<name>`: the step Job the dispatcher starts for an AppRestore.
import { runAppRestore } from './restore.ts';
import { namespacedStep, pollingContext } from './step-context.ts';

export const appRestoreStep = namespacedStep('app-restore', 'AppRestore', (env, ref) =>
  runAppRestore(pollingContext(env), ref),
);
