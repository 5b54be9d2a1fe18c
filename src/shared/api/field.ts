// The vocabulary in which ferry's API is described once (./fields.ts). Two readers turn a description into what
// the cluster and the dispatcher check: ./openapi.ts into the CRDs' OpenAPI v3 schemas, ./schemas.ts into valibot
// schemas. Only what both can express the same way is here: patterns are limited to the syntax RE2 (Go) and
// JavaScript read alike, lengths count Unicode code points as the apiserver does.

/** A regular expression together with the words that tell a user what it allows. */
export interface Pattern {
  regex: string;
  /** completes "must be ...", e.g. "a DNS-1123 label (lowercase letters, digits and '-')" */
  allowed: string;
}

interface Described {
  /** what `kubectl explain` shows */
  description: string;
}

export interface StringField extends Described {
  type: 'string';
  enum?: readonly string[];
  pattern?: Pattern;
  minLength?: number;
  maxLength?: number;
  /** RFC 3339 timestamps, as Kubernetes writes them */
  format?: 'date-time';
  default?: string;
}

export interface IntegerField extends Described {
  type: 'integer';
  minimum?: number;
  maximum?: number;
  default?: number;
}

export interface NumberField extends Described {
  type: 'number';
  minimum?: number;
  default?: number;
}

export interface BooleanField extends Described {
  type: 'boolean';
  default?: boolean;
}

export interface ObjectField extends Described {
  type: 'object';
  properties: Record<string, Field>;
  required?: readonly string[];
  /** exactly one of these properties must be set */
  exactlyOneOf?: readonly string[];
}

export interface ArrayField extends Described {
  type: 'array';
  items: Field;
  minItems?: number;
  maxItems?: number;
  /** 'set': items are unique; 'map': items are unique by `mapKeys` (Kubernetes list types) */
  listType?: 'atomic' | 'set' | 'map';
  mapKeys?: readonly string[];
}

/** An object with free keys and values of one kind (labels, tags). */
export interface MapField extends Described {
  type: 'map';
  values: Field;
  maxProperties?: number;
}

export type Field = StringField | IntegerField | NumberField | BooleanField | ObjectField | ArrayField | MapField;

type Options<F extends Field> = Omit<F, 'type' | 'description'>;

export function str(description: string, options: Options<StringField> = {}): StringField {
  return { type: 'string', description, ...options };
}

export function int(description: string, options: Options<IntegerField> = {}): IntegerField {
  return { type: 'integer', description, ...options };
}

export function num(description: string, options: Options<NumberField> = {}): NumberField {
  return { type: 'number', description, ...options };
}

export function bool(description: string, options: Options<BooleanField> = {}): BooleanField {
  return { type: 'boolean', description, ...options };
}

export function obj(
  description: string,
  properties: Record<string, Field>,
  options: Omit<Options<ObjectField>, 'properties'> = {},
): ObjectField {
  return { type: 'object', description, properties, ...options };
}

export function arr(description: string, items: Field, options: Omit<Options<ArrayField>, 'items'> = {}): ArrayField {
  return { type: 'array', description, items, ...options };
}

export function map(description: string, values: Field, options: Omit<Options<MapField>, 'values'> = {}): MapField {
  return { type: 'map', description, values, ...options };
}

/** Characters, counted as the apiserver counts them (code points, not UTF-16 units). */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}
