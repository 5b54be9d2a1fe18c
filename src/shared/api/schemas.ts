// valibot schemas of ferry's resources, made from the same descriptions as the CRDs (./fields.ts), so the dispatcher
// admits exactly what the apiserver's schema admits. Every issue names its field (`spec.sourcePVC`) and says what
// is allowed there.
import * as v from 'valibot';
import { codePoints } from './field.ts';
import type { ArrayField, Field, MapField, ObjectField, StringField } from './field.ts';
import { fieldsOf } from './fields.ts';
import type { DescribedKind } from './fields.ts';

type Schema = v.GenericSchema;
type Check = v.GenericPipeAction;

export interface FieldIssue {
  /** e.g. spec.targetPVC.accessModes[1] */
  path: string;
  message: string;
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function stringSchema(field: StringField): Schema {
  if (field.enum) return v.picklist([...field.enum], `must be one of ${field.enum.join(', ')}`);
  const checks: Check[] = [];
  const { minLength, maxLength, pattern } = field;
  if (minLength !== undefined)
    checks.push(v.check((s: string) => codePoints(s) >= minLength, `must be at least ${minLength} characters long`));
  if (maxLength !== undefined)
    checks.push(v.check((s: string) => codePoints(s) <= maxLength, `must be at most ${maxLength} characters long`));
  if (pattern) {
    const regex = new RegExp(pattern.regex);
    checks.push(v.check((s: string) => regex.test(s), `must be ${pattern.allowed}`));
  }
  if (field.format === 'date-time')
    checks.push(v.check((s: string) => rfc3339.test(s), 'must be an RFC 3339 timestamp such as 2025-01-31T12:00:00Z'));
  return v.pipe(v.string('must be a string'), ...checks);
}

function numberChecks(field: { minimum?: number; maximum?: number }): Check[] {
  const checks: Check[] = [];
  const { minimum, maximum } = field;
  if (minimum !== undefined) checks.push(v.check((n: number) => n >= minimum, `must be at least ${minimum}`));
  if (maximum !== undefined) checks.push(v.check((n: number) => n <= maximum, `must be at most ${maximum}`));
  return checks;
}

/** The key by which a list item must be unique: the whole item for sets, the map keys for maps. */
function identity(field: ArrayField, item: unknown): string {
  if (field.listType === 'map' && field.mapKeys && typeof item === 'object' && item !== null) {
    return field.mapKeys.map((k) => `${k}=${JSON.stringify((item as Record<string, unknown>)[k])}`).join(', ');
  }
  return JSON.stringify(item);
}

function uniqueItems(field: ArrayField): Check {
  return v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const seen = new Set<string>();
    for (const item of dataset.value as unknown[]) {
      const id = identity(field, item);
      if (seen.has(id)) return addIssue({ message: `must not repeat an item (${id} appears more than once)` });
      seen.add(id);
    }
  });
}

function arraySchema(field: ArrayField): Schema {
  const checks: Check[] = [];
  const { minItems, maxItems } = field;
  if (minItems !== undefined)
    checks.push(
      v.check(
        (a: unknown[]) => a.length >= minItems,
        `must have at least ${minItems} item${minItems === 1 ? '' : 's'}`,
      ),
    );
  if (maxItems !== undefined)
    checks.push(v.check((a: unknown[]) => a.length <= maxItems, `must have at most ${maxItems} items`));
  if (field.listType === 'set' || field.listType === 'map') checks.push(uniqueItems(field));
  return v.pipe(v.array(fieldSchema(field.items), 'must be a list'), ...checks);
}

// valibot takes arrays for objects; JSON Schema does not
const notAList = v.custom<unknown>((input) => !Array.isArray(input), 'must be an object, not a list');

function mapSchema(field: MapField): Schema {
  const { maxProperties } = field;
  const checks: Check[] =
    maxProperties === undefined
      ? []
      : [
          v.check(
            (m: Record<string, unknown>) => Object.keys(m).length <= maxProperties,
            `must have at most ${maxProperties} entries`,
          ),
        ];
  return v.pipe(
    notAList,
    v.record(v.string(), fieldSchema(field.values), 'must be an object of key: value entries'),
    ...checks,
  );
}

function objectSchema(field: ObjectField): Schema {
  const entries: Record<string, Schema> = {};
  const required = new Set(field.required ?? []);
  for (const [name, child] of Object.entries(field.properties)) {
    entries[name] = required.has(name) ? fieldSchema(child) : v.optional(fieldSchema(child));
  }
  // unknown keys pass (and are dropped), as the apiserver prunes them before admission
  const schema = v.pipe(
    notAList,
    v.object(entries, (issue) => (issue.input === undefined ? 'is required' : 'must be an object')),
  );
  const oneOf = field.exactlyOneOf;
  if (!oneOf) return schema;
  return v.pipe(
    schema,
    v.check(
      (o: Record<string, unknown>) => oneOf.filter((k) => o[k] !== undefined).length === 1,
      `must set exactly one of ${oneOf.join(', ')}`,
    ),
  );
}

export function fieldSchema(field: Field): Schema {
  switch (field.type) {
    case 'string':
      return stringSchema(field);
    case 'integer':
      return v.pipe(v.number('must be an integer'), v.integer('must be an integer'), ...numberChecks(field));
    case 'number':
      return v.pipe(v.number('must be a number'), v.finite('must be a finite number'), ...numberChecks(field));
    case 'boolean':
      return v.boolean('must be true or false');
    case 'object':
      return objectSchema(field);
    case 'array':
      return arraySchema(field);
    case 'map':
      return mapSchema(field);
  }
}

function kindSchemas(kind: DescribedKind): { spec: Schema; status: Schema } {
  return { spec: fieldSchema(fieldsOf[kind].spec), status: fieldSchema(fieldsOf[kind].status) };
}

export const schemas = Object.fromEntries(
  (Object.keys(fieldsOf) as DescribedKind[]).map((kind) => [kind, kindSchemas(kind)]),
) as Record<DescribedKind, { spec: Schema; status: Schema }>;

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

function pathText(root: string, issue: v.BaseIssue<unknown>): string {
  let text = root;
  for (const item of issue.path ?? []) {
    const key = item.key;
    if (typeof key === 'number') text += `[${key}]`;
    else if (typeof key === 'string' && identifier.test(key)) text += `.${key}`;
    else text += `[${JSON.stringify(key)}]`;
  }
  return text;
}

/** The issues of `value` as the `part` of a `kind`, each naming its field from `part` down; [] when valid. */
export function validateFields(kind: DescribedKind, part: 'spec' | 'status', value: unknown): FieldIssue[] {
  if (value === undefined) return part === 'spec' ? [{ path: 'spec', message: 'is required' }] : [];
  const result = v.safeParse(schemas[kind][part], value);
  return result.success ? [] : result.issues.map((issue) => ({ path: pathText(part, issue), message: issue.message }));
}

export function issueText(issue: FieldIssue): string {
  return `${issue.path}: ${issue.message}`;
}
