// What `logs` says for a step whose Job is gone. finalize removes the transfer Jobs as soon as the resource ends
// (the finished pod holds the exposed PVC), and other step Jobs expire an hour after they end; their logs go with
// them. What the transfer did is not lost: it ended with one status write (its step record's message, the stats)
// and, when it failed, the dispatcher quoted its termination message in status.message. So this prints what status
// kept rather than a copy of the log: the log lines of a finished transfer say nothing more, and keeping them again
// in every resource would grow objects stored in etcd.
import type { StepName } from '../../shared/api/types.ts';
import { formatBytes } from '../output.ts';
import { between } from '../resource/time.ts';
import type { Resource } from './kinds.ts';
import type { JobRun } from './step-jobs.ts';

function why(step: StepName): string {
  return step === 'transfer'
    ? 'removed after completion (its pod held the exposed volume)'
    : 'removed an hour after it ended';
}

function stats(r: Resource): string | undefined {
  const st = r.status?.stats;
  const node = r.status?.node ? ` on node ${r.status.node}` : '';
  return (
    st &&
    `${st.files} files, ${formatBytes(st.bytes)} read, ${formatBytes(st.bytesAdded)} new, ${formatBytes(st.bytesStored)} stored, in ${st.durationSeconds.toFixed(1)}s${node}`
  );
}

/**
 * The lines for a step recorded in status none of whose Jobs is still there (none otherwise): a header like the log
 * headers, then "its summary: ...": how the step record says it ended (or the dispatcher's message when it gave up on
 * this step) and, for the transfer, the stats.
 */
export function removedStepLines(r: Resource, jobs: readonly JobRun[], step: StepName): string[] {
  const rec = r.status?.steps?.[step];
  if (!rec || jobs.some((j) => j.step === step)) return [];
  // the dispatcher's word when it gave up on this step says more than the record, written when the step started
  const gaveUp = new RegExp(`\\bstep ${step} (failed|ran) `).test(r.status?.message ?? '')
    ? r.status?.message
    : undefined;
  const took = between(rec.startTime, rec.endTime);
  const ended = `${rec.outcome === 'Failed' ? 'failed' : 'ended'} at ${rec.endTime ?? '(no time)'}${took ? ` after ${took}` : ''}`;
  const summary = [gaveUp ?? `${ended}: ${rec.message ?? '(no message)'}`];
  if (step === 'transfer') summary.push(stats(r) ?? 'no data moved');
  return [
    `==> ${step} attempt ${rec.attempts}: Job ${rec.job ?? '(unnamed)'} ${why(step)} <==`,
    `its summary: ${summary.map((part) => part.replace(/\.$/, '')).join('; ')}`,
  ];
}
