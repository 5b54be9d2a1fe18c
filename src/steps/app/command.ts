// `ferry-step app-backup <namespace>/<name>`: the AppBackup step as the step table lists it. Its context is made
// from what every step runs with, the poll interval (FERRY_APP_POLL_MS, default 3s) and the hooks' dependencies.
import type { StepEnvironment } from '../context.ts';
import { failsOnFailed, type StepDescription } from '../description.ts';
import { runAppBackup } from './backup.ts';
import { parseAppBackupRef, type AppBackupContext } from './context.ts';
import { appBackupDeps } from './hooks-wiring.ts';

const defaultPollMs = 3000;

function appBackupContext(env: StepEnvironment): AppBackupContext {
  const poll = Number(process.env.FERRY_APP_POLL_MS ?? '');
  return {
    ...appBackupDeps(),
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

export const appBackupStep: StepDescription = {
  name: 'app-backup',
  usage: 'ferry-step app-backup <namespace>/<name>',
  parse(args) {
    if (args.length !== 1 || !args[0])
      throw new Error(
        `the app-backup command takes one argument, an AppBackup as <namespace>/<name>; got ${args.length}`,
      );
    const ref = parseAppBackupRef(args[0]);
    return {
      logFields: { step: 'app-backup', resource: args[0] },
      run: (env) => runAppBackup(appBackupContext(env), ref),
      exitCode: failsOnFailed,
    };
  },
};
