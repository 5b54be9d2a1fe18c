// What can be decided about a request from the objects alone, without asking the cluster: valid fields, a spec that
// stays as created (except cancel), and a status that never leaves a terminal phase. The name is the apiserver's to
// judge: any name it takes (up to 253 characters) works, since what ferry derives from it fits its own limits.
import { isDeepStrictEqual } from 'node:util';
import { terminalPhases } from '../shared/api/phases.ts';
import { issueText, validateFields } from '../shared/api/schemas.ts';
import type { DescribedKind } from '../shared/api/fields.ts';
import type { FerryResource, ObjectMeta } from '../shared/api/types.ts';
import { invalid } from './admission.ts';
import type { Denial } from './admission.ts';

/** What the rules read of any of ferry's kinds that has a spec fixed at creation and a status with phases. */
export interface Checked {
  kind: DescribedKind;
  metadata: ObjectMeta;
  spec: unknown;
  status?: { phase?: string };
}

export function fieldDenial(kind: DescribedKind, part: 'spec' | 'status', value: unknown): Denial | undefined {
  const issues = validateFields(kind, part, value);
  return issues.length ? invalid(issues.map(issueText).join('; ')) : undefined;
}

/** The object as a resource of `kind`, or a denial when it is not even shaped like one. */
export function asResource<T extends Checked = FerryResource>(kind: DescribedKind, obj: unknown): T | Denial {
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) return invalid(`the ${kind} is not a JSON object`);
  const metadata = (obj as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null || typeof (metadata as { name?: unknown }).name !== 'string') {
    return invalid('metadata.name: is required');
  }
  return obj as T;
}

export function isDenial(x: unknown): x is Denial {
  return typeof x === 'object' && x !== null && 'code' in x && 'reason' in x && 'message' in x;
}

export function checkCreate(resource: Checked): Denial | undefined {
  return fieldDenial(resource.kind, 'spec', resource.spec);
}

/** A spec as fixed at creation: every field but cancel. */
function fixedPart(spec: unknown): Record<string, unknown> {
  const { cancel: _, ...rest } = (spec ?? {}) as Record<string, unknown>;
  return rest;
}

export function checkSpecUpdate(old: Checked, next: Checked): Denial | undefined {
  const fields = fieldDenial(next.kind, 'spec', next.spec);
  if (fields) return fields;
  const before = fixedPart(old.spec);
  const after = fixedPart(next.spec);
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])]
    .filter((k) => !isDeepStrictEqual(before[k], after[k]))
    .sort();
  if (changed.length) {
    return invalid(
      `${changed.map((k) => `spec.${k}`).join(', ')}: cannot change after creation; only spec.cancel may be set (create a new ${next.kind} instead)`,
    );
  }
  const canceled = (spec: unknown): boolean => (spec as { cancel?: unknown } | undefined)?.cancel === true;
  if (canceled(old.spec) && !canceled(next.spec)) return invalid('spec.cancel: cannot be unset once set');
  return undefined;
}

/** `final`: the kind's phases that end its life (a DataUpload's and DataDownload's by default). */
export function checkStatusUpdate(
  old: Checked,
  next: Checked,
  final: readonly string[] = terminalPhases,
): Denial | undefined {
  const fields = fieldDenial(next.kind, 'status', next.status);
  if (fields) return fields;
  const from = old.status?.phase;
  const to = next.status?.phase;
  if (from && final.includes(from) && to !== from) {
    return invalid(`status.phase: cannot change from ${from}, which is final, to ${to ?? 'nothing'}`);
  }
  return undefined;
}
