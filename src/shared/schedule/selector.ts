// Kubernetes' label selector as a predicate on an object's labels (matchLabels and matchExpressions, all must hold).
import type { LabelSelector } from '../api/types.ts';

export function matchesSelector(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  const l = labels ?? {};
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) if (l[key] !== value) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = Object.hasOwn(l, e.key);
    const ok =
      e.operator === 'Exists'
        ? has
        : e.operator === 'DoesNotExist'
          ? !has
          : e.operator === 'In'
            ? has && (e.values ?? []).includes(l[e.key])
            : !has || !(e.values ?? []).includes(l[e.key]);
    if (!ok) return false;
  }
  return true;
}

/** A selector with no terms would select everything; a schedule never means that. */
export function selectsSomething(selector: LabelSelector | undefined): selector is LabelSelector {
  return Boolean(selector && (Object.keys(selector.matchLabels ?? {}).length || selector.matchExpressions?.length));
}

/** Requirements whose values do not fit their operator (In and NotIn need values, Exists and DoesNotExist take none). */
export function expressionProblems(selector: LabelSelector | undefined, path: string): string[] {
  const problems: string[] = [];
  for (const [i, e] of (selector?.matchExpressions ?? []).entries()) {
    const wantsValues = e.operator === 'In' || e.operator === 'NotIn';
    if (wantsValues !== Boolean(e.values?.length)) {
      problems.push(
        `${path}.matchExpressions[${i}].values: ${wantsValues ? `must not be empty for ${e.operator}` : `must be empty for ${e.operator}`}`,
      );
    }
  }
  return problems;
}
