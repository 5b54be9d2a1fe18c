// Which phases end the life of an AppBackup or AppRestore: the step Job that drives one is due until then (and an
// AppBackup being deleted while it holds its finalizer still needs it to cancel and clean up).
import { appBackupTerminalPhases } from '../api/app.ts';
import type { AppKind, AppRestorePhase } from '../api/app.ts';

export const appRestoreTerminalPhases: readonly AppRestorePhase[] = [
  'FailedValidation',
  'Completed',
  'PartiallyFailed',
  'Failed',
];

export function isAppTerminal(kind: AppKind, phase: string | undefined): boolean {
  const terminal: readonly string[] = kind === 'AppBackup' ? appBackupTerminalPhases : appRestoreTerminalPhases;
  return phase !== undefined && terminal.includes(phase);
}
