// A CopyPolicy's status, from the DataCopies it made as the sweep lists them: how many completed and when the last
// did, how many wait for a retry, and the Ready condition saying whether the policy can copy (its locations exist,
// its copies are made and none is failing). Pure; the sweep writes it when it changed (./copy-policy-reconcile.ts).
import type { CopyPolicy, CopyPolicyStatus, DataCopy } from '../shared/api/copy.ts';
import { findCondition, setCondition } from '../shared/kube/conditions.ts';
import type { ConditionInput } from '../shared/kube/conditions.ts';

export const readyCondition = 'Ready';

/** A copy whose last attempt failed and that waits for its next one. */
export function isRetrying(copy: DataCopy): boolean {
  if (copy.status?.phase !== 'InProgress') return false;
  return Boolean(copy.status.nextAttemptTime) || findCondition(copy.status.conditions, 'Copied')?.status === 'False';
}

/** The policy's copies: spec.policy names it (a copy by hand names none). */
export function copiesOf(policy: CopyPolicy, copies: readonly DataCopy[]): DataCopy[] {
  return copies.filter((c) => c.spec.policy === policy.metadata.name);
}

function ready(policy: CopyPolicy, retrying: number, problem: string | undefined): ConditionInput {
  if (problem) return { type: readyCondition, status: 'False', reason: 'CannotCopy', message: problem };
  if (retrying > 0)
    return {
      type: readyCondition,
      status: 'False',
      reason: 'CopiesRetrying',
      message: `${retrying} DataCopies of this policy failed their last attempt and wait for a retry.`,
    };
  if (policy.spec.suspend === true)
    return { type: readyCondition, status: 'True', reason: 'Suspended', message: 'spec.suspend: no new copies.' };
  return {
    type: readyCondition,
    status: 'True',
    reason: 'Copying',
    message: `Backups of "${policy.spec.sourceLocation}" are copied to "${policy.spec.destinationLocation}".`,
  };
}

/**
 * The status `policy` should show. `copies`: its DataCopies in every namespace; `problem`: why it could not make
 * the copies it should have made on this pass (a missing location, a refused create), if anything.
 */
export function policyStatus(
  policy: CopyPolicy,
  copies: readonly DataCopy[],
  problem: string | undefined,
  now: Date,
): CopyPolicyStatus {
  const mine = copiesOf(policy, copies);
  const completed = mine.filter((c) => c.status?.phase === 'Completed');
  const times = completed.map((c) => c.status?.completionTimestamp ?? '').filter((t) => t !== '');
  const retrying = mine.filter(isRetrying).length;
  const status: CopyPolicyStatus = {
    observedGeneration: policy.metadata.generation,
    copiesCompleted: completed.length,
    copiesRetrying: retrying,
    conditions: setCondition(policy.status?.conditions, ready(policy, retrying, problem), now),
  };
  // RFC 3339 UTC times of one format sort as text
  if (times.length) status.lastCopyTime = times.sort().at(-1);
  else if (policy.status?.lastCopyTime) status.lastCopyTime = policy.status.lastCopyTime;
  return status;
}

/** JSON with object keys sorted: the apiserver hands fields back in its own order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Whether writing `next` would change what the policy shows. */
export function statusChanged(policy: CopyPolicy, next: CopyPolicyStatus): boolean {
  return canonical(policy.status ?? {}) !== canonical(next);
}
