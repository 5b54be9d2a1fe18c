// `ferry-step maintenance` as the entry point runs it: one task on every repository of a storage location (the
// location's maintenance CronJob), or --reconcile to make those CronJobs match the locations.
import type { MaintenanceTask } from '../../shared/api/types.ts';
import { failsOnFailed, type StepDescription } from '../description.ts';
import { tasks } from './cronjobs.ts';
import { runMaintenance, type MaintenanceRequest } from './run.ts';

const usage = `ferry-step maintenance (<BackupStorageLocation> <${tasks.join('|')}> | --reconcile)`;

/** The arguments after `maintenance`. */
export function parseMaintenanceArgs(args: readonly string[]): MaintenanceRequest {
  if (args.length === 1 && args[0] === '--reconcile') return { mode: 'reconcile' };
  const [location, task] = args;
  if (args.length !== 2 || !location || location.startsWith('-') || !tasks.includes(task as MaintenanceTask)) {
    throw new Error(
      `"${args.join(' ')}" does not name a storage location and a task (${tasks.join(', ')}), nor --reconcile`,
    );
  }
  return { mode: 'run', location, task: task as MaintenanceTask };
}

export const maintenanceStep: StepDescription = {
  name: 'maintenance',
  usage,
  parse(args) {
    const req = parseMaintenanceArgs(args);
    return {
      logFields: { step: 'maintenance', location: req.mode === 'run' ? req.location : 'reconcile' },
      run: (env) => runMaintenance(env, req),
      exitCode: failsOnFailed,
    };
  },
};
