// Kubernetes' standard conditions: one entry per type; lastTransitionTime moves only when the status changes, so
// it tells how long the resource has been in that state, not when a step last looked.
import type { Condition } from '../api/types.ts';

export type ConditionInput = Omit<Condition, 'lastTransitionTime'>;

/** The conditions with `c` set by type (a new array; the input is not changed). */
export function setCondition(conditions: readonly Condition[] | undefined, c: ConditionInput, now: Date): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((x) => x.type === c.type);
  const previous = i >= 0 ? list[i] : undefined;
  const lastTransitionTime = previous && previous.status === c.status ? previous.lastTransitionTime : rfc3339(now);
  const next: Condition = { ...c, lastTransitionTime };
  if (i >= 0) list[i] = next;
  else list.push(next);
  return list;
}

export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** metav1.Time: RFC 3339 in UTC with whole seconds. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
