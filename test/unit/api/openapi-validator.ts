// A validator for the subset of OpenAPI v3 that ferry's CRDs use, written independently of src/shared/api/schemas.ts
// so a test can hold the two against each other: type, enum, pattern, length (in code points, as the apiserver
// counts), format date-time, minimum/maximum, properties/required (unknown keys are pruned, not errors),
// additionalProperties, maxProperties, items, minItems/maxItems, Kubernetes list types, and oneOf of value checks.

export type Schema = Record<string, any>;

const dateTime = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

function typeError(schema: Schema, value: unknown): boolean {
  switch (schema.type) {
    case 'string':
      return typeof value !== 'string';
    case 'boolean':
      return typeof value !== 'boolean';
    case 'integer':
      return typeof value !== 'number' || !Number.isInteger(value);
    case 'number':
      return typeof value !== 'number' || !Number.isFinite(value);
    case 'array':
      return !Array.isArray(value);
    case 'object':
      return typeof value !== 'object' || value === null || Array.isArray(value);
    case undefined:
      return false;
    default:
      throw new Error(`the test validator does not know type ${schema.type}`);
  }
}

function stringErrors(schema: Schema, s: string, path: string): string[] {
  const errors: string[] = [];
  const length = Array.from(s).length;
  if (schema.minLength !== undefined && length < schema.minLength)
    errors.push(`${path}: shorter than ${schema.minLength}`);
  if (schema.maxLength !== undefined && length > schema.maxLength)
    errors.push(`${path}: longer than ${schema.maxLength}`);
  if (schema.pattern !== undefined && !new RegExp(schema.pattern).test(s))
    errors.push(`${path}: does not match ${schema.pattern}`);
  if (schema.format === 'date-time' && !dateTime.test(s)) errors.push(`${path}: not a date-time`);
  return errors;
}

function listErrors(schema: Schema, list: unknown[], path: string): string[] {
  const errors: string[] = [];
  if (schema.minItems !== undefined && list.length < schema.minItems)
    errors.push(`${path}: fewer than ${schema.minItems} items`);
  if (schema.maxItems !== undefined && list.length > schema.maxItems)
    errors.push(`${path}: more than ${schema.maxItems} items`);
  list.forEach((item, i) => errors.push(...validate(schema.items, item, `${path}[${i}]`)));
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set' || listType === 'map') {
    const keys: string[] | undefined = schema['x-kubernetes-list-map-keys'];
    const ids = list.map((item) =>
      JSON.stringify(listType === 'map' && keys ? keys.map((k) => (item as any)?.[k]) : item),
    );
    if (new Set(ids).size !== ids.length) errors.push(`${path}: duplicate items`);
  }
  return errors;
}

function objectErrors(schema: Schema, o: Record<string, unknown>, path: string): string[] {
  const errors: string[] = [];
  for (const name of schema.required ?? []) if (o[name] === undefined) errors.push(`${path}.${name}: required`);
  if (schema.maxProperties !== undefined && Object.keys(o).length > schema.maxProperties)
    errors.push(`${path}: too many properties`);
  for (const [name, value] of Object.entries(o)) {
    if (value === undefined) continue;
    const child = schema.properties?.[name] ?? schema.additionalProperties;
    if (child) errors.push(...validate(child, value, `${path}.${name}`));
  }
  return errors;
}

/** Error strings for `value` against `schema`, [] when it is valid. */
export function validate(schema: Schema, value: unknown, path = ''): string[] {
  if (typeError(schema, value)) return [`${path}: not of type ${schema.type}`];
  const errors: string[] = [];
  if (schema.enum && !schema.enum.includes(value)) errors.push(`${path}: not in enum`);
  if (typeof value === 'string') errors.push(...stringErrors(schema, value, path));
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${path}: below minimum`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${path}: above maximum`);
  }
  if (Array.isArray(value)) errors.push(...listErrors(schema, value, path));
  else if (typeof value === 'object' && value !== null)
    errors.push(...objectErrors(schema, value as Record<string, unknown>, path));
  if (schema.oneOf) {
    const matching = schema.oneOf.filter((branch: Schema) => validate(branch, value, path).length === 0).length;
    if (matching !== 1) errors.push(`${path}: matches ${matching} of the oneOf branches`);
  }
  return errors;
}
