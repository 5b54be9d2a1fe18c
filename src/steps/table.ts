// Every step `ferry-step` runs, by the names in the shared list (src/shared/api/types.ts stepCommands): the five
// data steps, the two schedule commands, maintenance, a location's backup sync, the AppBackup and AppRestore steps and
// the DataCopy's. Keyed by that list, so a name without a description, or a description without a name, does not
// compile.
import type { StepCommand } from '../shared/api/types.ts';
import { stepCommands } from '../shared/api/types.ts';
import { deleteStep } from './data/delete.ts';
import { exposeStep } from './data/expose.ts';
import { finalizeStep } from './data/finalize.ts';
import { snapshotStep } from './data/snapshot.ts';
import { transferStep } from './data/transfer.ts';
import { appBackupStep } from './app/command.ts';
import { appRestoreStep } from './app/restore-command.ts';
import { copyStep } from './copy/command.ts';
import type { StepDescription } from './description.ts';
import { maintenanceStep } from './maintenance/command.ts';
import { scheduleRunStep, scheduleStep } from './schedule/command.ts';
import { locationSyncStep } from './sync/command.ts';

export const stepTable: Readonly<Record<StepCommand, StepDescription>> = {
  snapshot: snapshotStep,
  expose: exposeStep,
  transfer: transferStep,
  finalize: finalizeStep,
  delete: deleteStep,
  schedule: scheduleStep,
  'schedule-run': scheduleRunStep,
  maintenance: maintenanceStep,
  'location-sync': locationSyncStep,
  'app-backup': appBackupStep,
  'app-restore': appRestoreStep,
  copy: copyStep,
};

export function findStep(name: string): StepDescription | undefined {
  return Object.hasOwn(stepTable, name) ? stepTable[name as StepCommand] : undefined;
}

/** Every step's usage line, in the shared list's order. */
export const stepUsage = stepCommands
  .map((name, i) => `${i === 0 ? 'usage:' : '   or:'} ${stepTable[name].usage}`)
  .join('\n');
