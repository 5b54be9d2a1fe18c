// The one namespace-access rule of a storage location, as the dispatcher applies it at admission: which namespaces
// back up and restore within it, and which restores may read another namespace's repository.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BackupStorageLocationSpec } from '../../../src/shared/api/types.ts';
import { backupAllowed, restoreAllowed } from '../../../src/shared/location/namespaces.ts';

type Access = Pick<BackupStorageLocationSpec, 'allowedNamespaces' | 'crossNamespaceRestores'>;
const spec: Access = {
  allowedNamespaces: ['team-a', 'team-b'],
  crossNamespaceRestores: [
    { from: 'team-a', to: ['team-b'] },
    { from: 'shared', to: ['*'] },
  ],
};

test('a namespace backs up only where the location lists it or "*"', () => {
  const cases: [Access, string, boolean][] = [
    [spec, 'team-a', true],
    [spec, 'team-c', false],
    [{ allowedNamespaces: ['*'] }, 'team-c', true],
    // exact names only: no prefix, suffix, substring, pattern or case folding
    [spec, 'team', false],
    [spec, 'team-a-x', false],
    [spec, 'xteam-a', false],
    [spec, 'Team-A', false],
    [{ allowedNamespaces: ['team-*'] as string[] }, 'team-a', false],
    [{ allowedNamespaces: ['team-a'] }, '*', false],
    [{ allowedNamespaces: ['team-a'] }, '', false],
    // a spec the schema would refuse (a string instead of a list, no list at all) allows nothing
    [{ allowedNamespaces: 'team-a-and-b' as unknown as string[] }, 'team-a', false],
    [{} as Access, 'team-a', false],
    [{ allowedNamespaces: ['a'.repeat(63)] }, 'a'.repeat(63), true],
    [{ allowedNamespaces: ['a'.repeat(63)] }, 'a'.repeat(62), false],
  ];
  for (const [s, ns, allowed] of cases)
    assert.equal(backupAllowed(s, ns), allowed, `${JSON.stringify(s.allowedNamespaces)} / "${ns}"`);
});

test('a restore within a namespace needs the namespace allowed; across namespaces only a rule for that source allows it', () => {
  const cases: [Access, string, string, boolean][] = [
    [spec, 'team-a', 'team-a', true],
    [spec, 'team-c', 'team-c', false],
    [spec, 'team-a', 'team-b', true],
    // the rule reads one way only
    [spec, 'team-b', 'team-a', false],
    [spec, 'team-a', 'team-c', false],
    // "*" among the allowed namespaces lets every namespace use the location, never read another's repository
    [{ allowedNamespaces: ['*'] }, 'team-a', 'team-b', false],
    [{ ...spec, allowedNamespaces: ['*'] }, 'team-b', 'team-a', false],
    // "*" in a rule's targets opens that source to every target, and only that source
    [spec, 'shared', 'anyone', true],
    [spec, 'shared-2', 'anyone', false],
    // a rule's source is a name, not a wildcard
    [{ allowedNamespaces: ['team-a'], crossNamespaceRestores: [{ from: '*', to: ['*'] }] }, 'team-b', 'team-a', false],
    [
      { allowedNamespaces: ['team-a'], crossNamespaceRestores: [{ from: 'team', to: ['*'] }] },
      'team-b',
      'team-a',
      false,
    ],
    [
      { allowedNamespaces: ['team-a'], crossNamespaceRestores: [{ from: 'team-b', to: ['team'] }] },
      'team-b',
      'team-a',
      false,
    ],
    // a target list written as one string must not match by substring
    [
      {
        allowedNamespaces: ['team-a'],
        crossNamespaceRestores: [{ from: 'team-b', to: 'team-ab' as unknown as string[] }],
      },
      'team-b',
      'team-a',
      false,
    ],
    [
      {
        allowedNamespaces: ['team-a'],
        crossNamespaceRestores: 'team-b' as unknown as Access['crossNamespaceRestores'],
      },
      'team-b',
      'team-a',
      false,
    ],
  ];
  for (const [s, from, to, allowed] of cases)
    assert.equal(restoreAllowed(s, from, to), allowed, `${JSON.stringify(s)}: ${from} -> ${to}`);
});
