// `ferry-step location-sync <location>` as the entry point runs it: the backup sync of one storage location (its
// CronJob ferry-sync-<location>, made while the location has spec.backupSync).
import { failsOnFailed, type StepDescription } from '../description.ts';
import { runLocationSync } from './run.ts';

export const locationSyncStep: StepDescription = {
  name: 'location-sync',
  usage: 'ferry-step location-sync <BackupStorageLocation>',
  parse(args) {
    const [location] = args;
    if (args.length !== 1 || !location || location.startsWith('-'))
      throw new Error(`"${args.join(' ')}" does not name one storage location`);
    return {
      logFields: { step: 'location-sync', location },
      run: (env) => runLocationSync(env, location),
      exitCode: failsOnFailed,
    };
  },
};
