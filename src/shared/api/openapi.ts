// A field description (./field.ts) as a structural OpenAPI v3 schema, the form CustomResourceDefinitions take.
// Descriptions also say what a pattern allows, because the apiserver's own message only quotes the regex.
import type { Field, ObjectField } from './field.ts';

export type OpenAPISchema = Record<string, unknown>;

export function openAPISchema(field: Field): OpenAPISchema {
  switch (field.type) {
    case 'string':
      return {
        type: 'string',
        description: field.pattern ? `${field.description} Must be ${field.pattern.allowed}.` : field.description,
        ...pick(field, ['enum', 'format', 'minLength', 'maxLength', 'default']),
        ...(field.pattern ? { pattern: field.pattern.regex } : {}),
      };
    case 'integer':
      return {
        type: 'integer',
        format: 'int64',
        description: field.description,
        ...pick(field, ['minimum', 'maximum', 'default']),
      };
    case 'number':
      return { type: 'number', description: field.description, ...pick(field, ['minimum', 'default']) };
    case 'boolean':
      return { type: 'boolean', description: field.description, ...pick(field, ['default']) };
    case 'object':
      return objectSchema(field);
    case 'array':
      return {
        type: 'array',
        description: field.description,
        items: openAPISchema(field.items),
        ...pick(field, ['minItems', 'maxItems']),
        ...(field.listType ? { 'x-kubernetes-list-type': field.listType } : {}),
        ...(field.mapKeys ? { 'x-kubernetes-list-map-keys': [...field.mapKeys] } : {}),
      };
    case 'map':
      return {
        type: 'object',
        description: field.description,
        additionalProperties: openAPISchema(field.values),
        ...pick(field, ['maxProperties']),
      };
  }
}

function objectSchema(field: ObjectField): OpenAPISchema {
  const properties: Record<string, OpenAPISchema> = {};
  for (const [name, child] of Object.entries(field.properties)) properties[name] = openAPISchema(child);
  return {
    type: 'object',
    description: field.exactlyOneOf
      ? `${field.description} Exactly one of ${field.exactlyOneOf.join(', ')} must be set.`
      : field.description,
    properties,
    ...(field.required?.length ? { required: [...field.required] } : {}),
    // structural schemas allow oneOf only as pure value validation: branches that name required fields
    ...(field.exactlyOneOf ? { oneOf: field.exactlyOneOf.map((name) => ({ required: [name] })) } : {}),
  };
}

function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) {
    const value = from[key];
    if (value !== undefined) out[key] = Array.isArray(value) ? ([...value] as T[K]) : value;
  }
  return out;
}
