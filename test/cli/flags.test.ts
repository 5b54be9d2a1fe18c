import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ArgsDef } from 'citty';
import { unknownFlag } from '../../src/cli/flags.ts';

const args: ArgsDef = {
  repo: { type: 'string', alias: 'r' },
  json: { type: 'boolean' },
  tag: { type: 'string' },
  paths: { type: 'positional' },
};

test('declared flags, aliases, --flag=value and --no-boolean pass', () => {
  assert.equal(unknownFlag(args, ['-r', '/repo', '--json', '--tag=a,b', '--no-json', 'path']), undefined);
});

test('the first undeclared flag is returned, without its value', () => {
  assert.equal(unknownFlag(args, ['--repo', '/x', '--tags=a', '--bogus']), '--tags');
  assert.equal(unknownFlag(args, ['-x']), '-x');
  assert.equal(unknownFlag(args, ['--no-repo']), '--no-repo', 'only booleans have a --no- form');
  assert.equal(unknownFlag(args, ['--paths', 'p']), '--paths', 'positionals are not flags');
});

test('a string flag takes the next word even when it starts with a dash; -- ends the flags', () => {
  assert.equal(unknownFlag(args, ['--tag', '-weird-tag', '--json']), undefined);
  assert.equal(unknownFlag(args, ['--json', '--', '--not-a-flag']), undefined);
});
