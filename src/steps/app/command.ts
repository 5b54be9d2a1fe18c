// `ferry-step app-backup <namespace>/<name>`: the AppBackup step as the step table lists it, with the hooks'
// dependencies (./hooks-wiring.ts) added to the context every long-running step has.
import { runAppBackup } from './backup.ts';
import { appBackupDeps } from './hooks-wiring.ts';
import { namespacedStep, pollingContext } from './step-context.ts';

export const appBackupStep = namespacedStep('app-backup', 'AppBackup', (env, ref) =>
  runAppBackup({ ...pollingContext(env), ...appBackupDeps() }, ref),
);
