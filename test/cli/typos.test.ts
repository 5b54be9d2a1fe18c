// A newcomer's first mistakes: a mistyped command or flag is refused (exit 2) with the nearest one that exists,
// and the help marks an argument that is required as required.
import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { closest } from '../../src/cli/suggest.ts';
import { ferry } from '../support/ferry-cli.ts';

const typos: { args: string[]; says: RegExp }[] = [
  {
    args: ['backup', 'craete', 'b1'],
    says: /unknown command "craete" \(did you mean create\?\); the commands here are: create, get/,
  },
  { args: ['repo', 'chek'], says: /unknown command "chek" \(did you mean check\?\)/ },
  { args: ['restroe', 'get'], says: /unknown command "restroe" \(did you mean restore\?\)/ },
  {
    args: ['backup', 'create', 'b1', '--pvc', 'data', '--wiat'],
    says: /unknown flag --wiat \(did you mean --wait\?\)/,
  },
  {
    args: ['repo', 'check', '--read-data-subest', '10%'],
    says: /unknown flag --read-data-subest \(did you mean --read-data-subset\?\)/,
  },
  { args: ['backup', 'create', 'b1', '--zzz'], says: /^ *ERROR +unknown flag --zzz \(see --help\)$/m },
];

describe('a mistyped command or flag names the nearest one', { concurrency: 4 }, () => {
  for (const c of typos) {
    it(c.args.join(' '), async () => {
      const r = await ferry(c.args, { password: null });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, c.says);
    });
  }
});

test('nothing is suggested when no known word is near', () => {
  assert.equal(closest('frobnicate', ['create', 'get', 'describe']), undefined);
  assert.equal(closest('delet', ['create', 'get', 'delete']), 'delete');
  assert.equal(closest('lgos', ['logs', 'get']), 'logs');
});

test('the help of a command whose NAME is required shows <NAME>, and leaving it out says so', async () => {
  for (const group of ['backup', 'restore']) {
    for (const command of ['create', 'describe', 'logs']) {
      const help = await ferry([group, command, '--help']);
      assert.match(help.stdout, /USAGE .*<NAME>/, `${group} ${command}: ${help.stdout}`);
      assert.doesNotMatch(help.stdout, /\[NAME\]/);
    }
  }
  const missing = await ferry(['backup', 'create', '--pvc', 'data']);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /NAME is required \(see --help\)/);
});
