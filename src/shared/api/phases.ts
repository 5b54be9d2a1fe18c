// The phase machine: which step moves a resource on from each phase, and which phases end its life.
// The dispatcher, the sweep and the steps all read it from here; nothing else decides what runs next.
import type { Phase, ResourceKind, StepName } from './types.ts';

export const terminalPhases: readonly Phase[] = ['Completed', 'Failed', 'Canceled'];

const uploadSteps: Partial<Record<Phase, StepName>> = {
  New: 'snapshot',
  Accepted: 'expose',
  Prepared: 'transfer',
  InProgress: 'transfer',
  Finalizing: 'finalize',
  Failing: 'finalize',
  Canceling: 'finalize',
};

const downloadSteps: Partial<Record<Phase, StepName>> = {
  New: 'expose',
  Prepared: 'transfer',
  InProgress: 'transfer',
  Finalizing: 'finalize',
  Failing: 'finalize',
  Canceling: 'finalize',
};

export interface PhaseView {
  phase?: Phase;
  deleting: boolean;
}

/** The step due for a resource in this state, or undefined when nothing is to run. */
export function dueStep(kind: ResourceKind, view: PhaseView): StepName | undefined {
  const phase = view.phase ?? 'New';
  if (view.deleting) {
    // a resource being deleted first finishes or cleans up, then the delete step frees its repository data
    if (terminalPhases.includes(phase)) return kind === 'DataUpload' ? 'delete' : undefined;
  }
  return (kind === 'DataUpload' ? uploadSteps : downloadSteps)[phase];
}

/** Phases a step may find its resource in, to do its work (a step finding anything else exits doing nothing). */
export function phasesOf(kind: ResourceKind, step: StepName): Phase[] {
  const table = kind === 'DataUpload' ? uploadSteps : downloadSteps;
  if (step === 'delete') return [...terminalPhases];
  return (Object.keys(table) as Phase[]).filter((p) => table[p] === step);
}

/** Where a successful step moves the resource. `finalize` depends on why it ran. */
export function nextPhase(kind: ResourceKind, step: StepName, from: Phase): Phase {
  switch (step) {
    case 'snapshot':
      return 'Accepted';
    case 'expose':
      return 'Prepared';
    case 'transfer':
      return 'Finalizing';
    case 'finalize':
      return from === 'Canceling' ? 'Canceled' : from === 'Failing' ? 'Failed' : 'Completed';
    case 'delete':
      return from;
  }
  void kind;
}

/** Past the transfer: only finalize is left to run, or nothing (the upload and download machines agree on this). */
export function pastTransfer(phase: Phase | undefined): boolean {
  if (phase === undefined) return false;
  return terminalPhases.includes(phase) || uploadSteps[phase] === 'finalize';
}

/** A cancel request moves any non-terminal phase to Canceling; finalize then cleans up. */
export function canCancel(phase: Phase | undefined): boolean {
  const p = phase ?? 'New';
  return !terminalPhases.includes(p) && p !== 'Canceling' && p !== 'Failing';
}

export const finalizerName = 'ferry.dev/delete-repository-data';
