// Which phases end the life of an AppBackup or AppRestore: the step Job that drives one is due until then (and an
// AppBackup being deleted while it holds its finalizer still needs it to cancel and clean up).
import { appBackupTerminalPhases, appRestoreTerminalPhases } from '../api/app.ts';
import type { AppKind } from '../api/app.ts';

export function appTerminalPhases(kind: AppKind): readonly string[] {
  return kind === 'AppBackup' ? appBackupTerminalPhases : appRestoreTerminalPhases;
}

export function isAppTerminal(kind: AppKind, phase: string | undefined): boolean {
  return phase !== undefined && appTerminalPhases(kind).includes(phase);
}
