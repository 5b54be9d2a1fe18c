// A resource's phase history, read back from what its steps recorded in status: each step's record says when it
// ran and how it ended, and the phase machine says where that took the resource. Status keeps no list of phases
// (each write would grow it); this derives one that survives the Events' expiry.
import { nextPhase } from '../../shared/api/phases.ts';
import { stepNames, type Phase, type StepName, type StepRecord } from '../../shared/api/types.ts';
import type { Resource } from './kinds.ts';

export interface PhaseEntry {
  /** RFC 3339, "" when not recorded */
  time: string;
  phase: Phase;
  /** the step whose end (or start, for InProgress) moved the resource here */
  step?: StepName;
  attempts?: number;
  note?: string;
}

// the delete step ends a resource's life without moving its phase
const stepOrder = stepNames.filter((s) => s !== 'delete');

function afterStep(r: Resource, step: StepName, rec: StepRecord): Phase {
  if (rec.outcome === 'Failed') return 'Failing';
  if (step !== 'finalize') return nextPhase(r.kind, step, 'New');
  // finalize ends where the resource is now when that is an end; otherwise it was a completion
  const phase = r.status?.phase;
  return phase === 'Canceled' || phase === 'Failed' ? phase : 'Completed';
}

export function phaseHistory(r: Resource): PhaseEntry[] {
  const entries: PhaseEntry[] = [{ time: r.metadata.creationTimestamp ?? '', phase: 'New', note: 'created' }];
  const steps = r.status?.steps ?? {};
  for (const step of stepOrder) {
    const rec = steps[step];
    if (!rec) continue;
    if (step === 'transfer' && rec.startTime)
      entries.push({
        time: rec.startTime,
        phase: 'InProgress',
        step,
        attempts: rec.attempts,
        note: 'transfer started',
      });
    if (rec.endTime)
      entries.push({
        time: rec.endTime,
        phase: afterStep(r, step, rec),
        step,
        attempts: rec.attempts,
        note: rec.message,
      });
  }
  entries.sort((a, b) => Date.parse(a.time || '0') - Date.parse(b.time || '0'));
  const current = r.status?.phase ?? 'New';
  // phases no step wrote (Canceling from the dispatcher, Failed after the last attempt) show as they are now
  if (entries[entries.length - 1].phase !== current) {
    const ended = current === 'Failed' || current === 'Canceled' ? r.status?.completionTimestamp : undefined;
    entries.push({ time: ended ?? '', phase: current, note: r.status?.message });
  }
  return entries;
}
