// What a Velero object's status says, given its mirror's: Velero knows eight phases, ferry ten, so ferry's own
// phases stay on the mirror and Velero sees what each means to it. A snapshot id is written only together with
// Completed (Velero reads the result the moment it sees the phase), and `node` is never written: Velero's
// node-agent, restarting, resumes in-progress objects whose node is its own without looking at the data mover.
import type { FerryResource, Phase } from '../api/types.ts';
import { rfc3339 } from '../kube/conditions.ts';
import { veleroTerminal } from './types.ts';
import type { VeleroObject, VeleroPhase, VeleroStatus } from './types.ts';

const phaseFor: Record<Phase, VeleroPhase> = {
  // a mirror exists: ferry has taken the object
  New: 'Accepted',
  Accepted: 'Accepted',
  Prepared: 'Prepared',
  InProgress: 'InProgress',
  // the data is stored; cleanup is still part of the work Velero waits for
  Finalizing: 'InProgress',
  Failing: 'InProgress',
  Canceling: 'Canceling',
  Completed: 'Completed',
  Failed: 'Failed',
  Canceled: 'Canceled',
};

/** The status a Velero object should show for its mirror. */
export function mirrorStatus(mirror: FerryResource): VeleroStatus {
  const s = mirror.status ?? {};
  const phase = phaseFor[s.phase ?? 'New'];
  const out: VeleroStatus = { phase };
  if (s.startTimestamp) out.startTimestamp = s.startTimestamp;
  if (s.progress) out.progress = { totalBytes: s.progress.totalBytes, bytesDone: s.progress.bytesDone };
  if (s.message && phase !== 'Completed') out.message = s.message;
  if (veleroTerminal.includes(phase) && s.completionTimestamp) out.completionTimestamp = s.completionTimestamp;
  if (mirror.kind === 'DataUpload' && phase === 'Completed') {
    out.snapshotID = mirror.status?.snapshotID;
    if (mirror.status?.stats) out.incrementalBytes = mirror.status.stats.bytesAdded;
    // Velero records the size a restore will need from the bytes done
    const total = mirror.status?.stats?.bytes ?? s.progress?.totalBytes;
    if (total !== undefined) out.progress = { totalBytes: total, bytesDone: total };
  }
  return out;
}

/** What ferry refused, as the Velero object's end. */
export function refusedStatus(message: string, now: Date): VeleroStatus {
  return { phase: 'Failed', message, completionTimestamp: rfc3339(now) };
}

/**
 * The merge patch turning the object's status into `desired`, or undefined when nothing is to change. A status
 * Velero shows as ended is never changed, and a Completed without a snapshot id is never written.
 */
export function statusPatch(v: VeleroObject, desired: VeleroStatus): { status: VeleroStatus } | undefined {
  const current = v.status ?? {};
  if (current.phase && veleroTerminal.includes(current.phase)) return undefined;
  if (desired.phase === 'Completed' && v.kind === 'DataUpload' && !desired.snapshotID) return undefined;
  const patch: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(desired) as [keyof VeleroStatus, unknown][]) {
    if (value !== undefined && JSON.stringify(current[key]) !== JSON.stringify(value)) patch[key] = value;
  }
  return Object.keys(patch).length > 0 ? { status: patch as VeleroStatus } : undefined;
}
