// fast-check generators of objects shaped by a field description: mostly valid, with a few wrong types, values
// outside their enum, pattern or bounds, missing required fields, repeated list items and unknown keys, so that
// whole objects come out valid about as often as not.
import fc from 'fast-check';
import type { ArrayField, Field, MapField, ObjectField, StringField } from '../../../src/shared/api/field.ts';

const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 5 }),
  fc.constant([]),
  fc.constant({}),
);

/** Mostly `valid`, rarely `invalid`: an object has dozens of fields, and should still be valid about half the time. */
function mostly<T>(valid: fc.Arbitrary<T>, invalid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: valid, weight: 60 }, { arbitrary: invalid, weight: 1 });
}

function fitting(field: StringField): fc.Arbitrary<string> {
  if (field.enum) return fc.constantFrom(...field.enum);
  if (field.format === 'date-time')
    return fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => d.toISOString());
  const { minLength = 0, maxLength = Infinity } = field;
  return shaped(field).filter((s) => Array.from(s).length >= minLength && Array.from(s).length <= maxLength);
}

/** Strings of the field's pattern, whatever their length. */
function shaped(field: StringField): fc.Arbitrary<string> {
  return field.pattern
    ? fc.stringMatching(new RegExp(field.pattern.regex), { size: 'xsmall' })
    : fc.string({ unit: 'grapheme', maxLength: 20 });
}

function stringArb(field: StringField): fc.Arbitrary<unknown> {
  const near: fc.Arbitrary<unknown>[] = [
    shaped(field),
    fc.string({ maxLength: 8 }),
    fc.constant(''),
    fc.string({ unit: 'grapheme', minLength: 60, maxLength: 70 }),
    wrongType,
  ];
  if (field.format === 'date-time') near.push(fc.constant('2025-01-31'), fc.constant('yesterday'));
  if (field.maxLength !== undefined && field.pattern) {
    near.push(fc.constant('a'.repeat(field.maxLength + 1)), fc.constant('a'.repeat(field.maxLength)));
  }
  return mostly(fitting(field), fc.oneof(...near));
}

function numberArb(field: { type: 'integer' | 'number'; minimum?: number; maximum?: number }): fc.Arbitrary<unknown> {
  const min = field.minimum ?? -1e9;
  const max = field.maximum ?? 1e9;
  const valid = field.type === 'integer' ? fc.integer({ min, max }) : fc.double({ min, max, noNaN: true });
  const invalid = fc.oneof(fc.constant(min - 1), fc.constant(max + 1), fc.constant(1.5), fc.constant(-0.25), wrongType);
  return mostly(valid, invalid);
}

function objectArb(field: ObjectField, depth: number): fc.Arbitrary<unknown> {
  const required = new Set(field.required ?? []);
  const entries: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, child] of Object.entries(field.properties)) entries[name] = arbitraryOf(child, depth + 1);
  const requiredKeys = Object.keys(entries).filter((k) => required.has(k));
  const record = fc.record(entries, { requiredKeys });
  // drop a required key now and then, and add an unknown one (the apiserver prunes it; it is not an error)
  const shaken = fc
    .tuple(
      oneOfRespected(field, entries, requiredKeys, record),
      fc.nat(60),
      fc.nat(Math.max(0, requiredKeys.length - 1)),
    )
    .map(([o, dice, which]) => {
      const copy: Record<string, unknown> = { ...o };
      if (dice === 0 && requiredKeys.length > 0) delete copy[requiredKeys[which]];
      if (dice === 1) copy.unknownField = 'x';
      return copy;
    });
  return mostly(shaken, wrongType);
}

/** For objects needing exactly one of some keys: mostly records with one of them, sometimes with any number. */
function oneOfRespected(
  field: ObjectField,
  entries: Record<string, fc.Arbitrary<unknown>>,
  requiredKeys: string[],
  record: fc.Arbitrary<Record<string, unknown>>,
): fc.Arbitrary<Record<string, unknown>> {
  const options = field.exactlyOneOf;
  if (!options) return record;
  const withOnly = (key: string): fc.Arbitrary<Record<string, unknown>> => {
    const kept = Object.fromEntries(
      Object.entries(entries).filter(([name]) => name === key || !options.includes(name)),
    );
    return fc.record(kept, { requiredKeys: [...requiredKeys, key] });
  };
  return fc.oneof({ arbitrary: fc.oneof(...options.map(withOnly)), weight: 20 }, { arbitrary: record, weight: 1 });
}

function arrayArb(field: ArrayField, depth: number): fc.Arbitrary<unknown> {
  const items = fc.array(arbitraryOf(field.items, depth + 1), { maxLength: depth > 3 ? 2 : 4 });
  const withRepeat = fc
    .tuple(items, fc.nat(30))
    .map(([list, n]) => (n === 0 && list.length > 0 ? [...list, list[0]] : list));
  return mostly(withRepeat, wrongType);
}

function mapArb(field: MapField, depth: number): fc.Arbitrary<unknown> {
  const max = (field.maxProperties ?? 8) + 2;
  return mostly(
    fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), arbitraryOf(field.values, depth + 1), { maxKeys: max }),
    wrongType,
  );
}

export function arbitraryOf(field: Field, depth = 0): fc.Arbitrary<unknown> {
  switch (field.type) {
    case 'string':
      return stringArb(field);
    case 'integer':
    case 'number':
      return numberArb(field);
    case 'boolean':
      return mostly(fc.boolean(), wrongType);
    case 'object':
      return objectArb(field, depth);
    case 'array':
      return arrayArb(field, depth);
    case 'map':
      return mapArb(field, depth);
  }
}
