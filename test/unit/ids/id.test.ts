// Ids are checked wherever they come from outside: file names in a repository, ids inside tree blobs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { isID } from '../../../src/engine/ids/id.ts';

test('isID accepts exactly 64 lowercase hex digits', () => {
  const hexChar = fc.constantFrom(...'0123456789abcdef');
  fc.assert(
    fc.property(fc.string({ unit: hexChar, minLength: 64, maxLength: 64 }), (s) => assert.equal(isID(s), true)),
  );
  fc.assert(fc.property(fc.string({ maxLength: 70 }), (s) => assert.equal(isID(s), /^[0-9a-f]{64}$/.test(s))));
  const id = 'ab'.repeat(32);
  for (const bad of [
    id.slice(1),
    `${id}0`,
    `${id.slice(1)}A`,
    `${id.slice(1)}g`,
    `${id.slice(1)}\u0130`,
    `${id.slice(1)}\u0161`,
    '',
  ])
    assert.equal(isID(bad), false, bad);
});
