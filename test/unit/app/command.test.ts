// `ferry-step app-backup` as the step table lists it: one argument naming an AppBackup, refused clearly otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseNamespacedRef } from '../../../src/steps/namespaced-ref.ts';
const parseAppBackupRef = (text: string) => parseNamespacedRef('AppBackup', text);
import { findStep } from '../../../src/steps/table.ts';

test('app-backup takes <namespace>/<name>, optionally after AppBackup/', () => {
  assert.deepEqual(parseAppBackupRef('app/db'), { namespace: 'app', name: 'db' });
  assert.deepEqual(parseAppBackupRef('AppBackup/app/db'), { namespace: 'app', name: 'db' });
  for (const bad of ['db', 'app/', '/db', 'a/b/c', 'DataUpload/app/db'])
    assert.throws(() => parseAppBackupRef(bad), /does not name an AppBackup: expected <namespace>\/<name>/, bad);
});

test('the step table runs app-backup with one argument and refuses more', () => {
  const step = findStep('app-backup');
  assert.ok(step);
  assert.equal(step.usage, 'ferry-step app-backup <namespace>/<name>');
  assert.deepEqual(step.parse(['app/db']).logFields, { step: 'app-backup', resource: 'app/db' });
  assert.throws(
    () => step.parse(['app/db', 'extra']),
    /takes one argument, an AppBackup as <namespace>\/<name>; got 2/,
  );
});
