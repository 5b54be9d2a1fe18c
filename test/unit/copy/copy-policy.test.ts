// What a CopyPolicy copies (src/dispatcher/copy-policy.ts): only Completed backups of its source location that the
// destination accepts and the policy selects, never a synced backup, never twice; and the DataCopy it makes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { CopyPolicy, DataCopy } from '../../../src/shared/api/copy.ts';
import type { BackupStorageLocationSpec, DataUpload } from '../../../src/shared/api/types.ts';
import { copyVerdict, policyCopy } from '../../../src/dispatcher/copy-policy.ts';
import { manualCopyName, policyCopyName } from '../../../src/shared/copy/names.ts';

const now = Date.parse('2026-11-29T12:00:00Z');

function policy(spec: Partial<CopyPolicy['spec']> = {}, name = 'offsite'): CopyPolicy {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'CopyPolicy',
    metadata: { name, namespace: 'ferry', generation: 1 },
    spec: { sourceLocation: 'site-a', destinationLocation: 'site-b', ...spec },
  };
}

function destination(allowedNamespaces: string[]): BackupStorageLocationSpec {
  return {
    s3: { endpoint: 'http://b:9000', bucket: 'b' },
    credential: { name: 'c' },
    repositoryPassword: { name: 'p', key: 'k' },
    allowedNamespaces,
  };
}

function upload(over: { name?: string; namespace?: string; labels?: Record<string, string> } = {}): DataUpload {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: {
      name: over.name ?? 'db-1',
      namespace: over.namespace ?? 'app',
      uid: 'u-1',
      labels: over.labels,
    },
    spec: { sourcePVC: 'db', backupStorageLocation: 'site-a' },
    status: { phase: 'Completed', snapshotID: 'f'.repeat(64), completionTimestamp: '2026-11-29T11:59:00Z' },
  };
}

function verdict(p: CopyPolicy, du: DataUpload, copies: DataCopy[] = [], allowed = ['*']) {
  return copyVerdict(p, destination(allowed), du, copies, now);
}

test('a Completed backup of the source location is copied; the policy name decides the copy name', () => {
  assert.deepEqual(verdict(policy(), upload()), { copy: true });
  assert.notEqual(policyCopyName('db-1', 'offsite'), policyCopyName('db-1', 'offsite-2'));
  assert.equal(policyCopyName('db-1', 'offsite'), policyCopyName('db-1', 'offsite'));
});

test('a DataUpload in a namespace the destination does not allow is never copied, with or without spec.namespaces', () => {
  for (const spec of [{}, { namespaces: ['app'] }]) {
    const v = verdict(policy(spec), upload({ namespace: 'app' }), [], ['other']);
    assert.deepEqual(v, { copy: false, why: 'location "site-b" does not allow namespace "app"' });
  }
  assert.equal(verdict(policy(), upload(), [], []).copy, false);
  // a prefix or case variant of an allowed name is not that name
  assert.equal(verdict(policy(), upload({ namespace: 'app' }), [], ['ap', 'APP', 'app-*']).copy, false);
});

test('a synced DataUpload is never copied (it is another site’s backup)', () => {
  const du = upload();
  du.metadata.annotations = { 'ferry.dev/synced-from': 'site-a' };
  assert.deepEqual(verdict(policy(), du), { copy: false, why: 'synced from location "site-a"' });
});

test('a DataUpload not yet Completed, or Completed without a snapshot, is not copied', () => {
  for (const phase of ['New', 'InProgress', 'Failed', 'Canceled', undefined] as const) {
    const du = upload();
    du.status = { ...du.status, phase };
    assert.equal(verdict(policy(), du).copy, false, `phase ${phase}`);
  }
  const noData = upload();
  delete noData.status!.snapshotID;
  assert.equal(verdict(policy(), noData).copy, false);
});

test('an existing DataCopy of this policy, or one status.copies records, means no second copy', () => {
  const du = upload();
  const made = policyCopy(policy(), du);
  assert.deepEqual(verdict(policy(), du, [made]), {
    copy: false,
    why: `already copied by DataCopy app/${policyCopyName('db-1', 'offsite')}`,
  });
  // renamed by hand but still this policy's copy of this backup
  const renamed = { ...made, metadata: { ...made.metadata, name: 'other-name' } };
  assert.equal(verdict(policy(), du, [renamed]).copy, false);
  const recorded = upload();
  recorded.status!.copies = [
    { backupStorageLocation: 'site-b', dataCopy: policyCopyName('db-1', 'offsite'), phase: 'Completed' },
  ];
  assert.equal(verdict(policy(), recorded).copy, false);
  // the same name in another namespace, or another policy's copy into another location, does not cover this one
  const elsewhere = { ...made, metadata: { ...made.metadata, namespace: 'other' } };
  assert.equal(verdict(policy(), du, [elsewhere]).copy, true);
  const toC = policyCopy(policy({ destinationLocation: 'site-c' }, 'second'), du);
  assert.equal(verdict(policy(), du, [toC]).copy, true);
  // any live copy into the same location does: two would share the copied snapshot, and deleting one would forget it
  const byHand: DataCopy = {
    ...made,
    metadata: { name: 'db-1-to-site-b', namespace: 'app' },
    spec: { dataUpload: 'db-1', backupStorageLocation: 'site-b' },
  };
  assert.deepEqual(verdict(policy({}, 'second'), du, [byHand]), {
    copy: false,
    why: 'already copied by DataCopy app/db-1-to-site-b',
  });
  // a failed or canceled one holds nothing
  for (const phase of ['Failed', 'Canceled'] as const)
    assert.equal(verdict(policy({}, 'second'), du, [{ ...byHand, status: { phase } }]).copy, true, phase);
});

test('spec.namespaces, spec.selector and spec.schedules narrow what is copied', () => {
  assert.equal(verdict(policy({ namespaces: ['other'] }), upload()).copy, false);
  const labelled = upload({ labels: { tier: 'gold', 'ferry.dev/schedule': 'nightly' } });
  assert.equal(verdict(policy({ selector: { matchLabels: { tier: 'gold' } } }), labelled).copy, true);
  assert.equal(verdict(policy({ selector: { matchLabels: { tier: 'silver' } } }), labelled).copy, false);
  assert.equal(verdict(policy({ schedules: ['nightly'] }), labelled).copy, true);
  assert.equal(verdict(policy({ schedules: ['app/nightly'] }), labelled).copy, true);
  assert.equal(verdict(policy({ schedules: ['other/nightly'] }), labelled).copy, false);
  assert.equal(verdict(policy({ schedules: ['hourly'] }), labelled).copy, false);
  assert.equal(verdict(policy({ schedules: ['nightly'] }), upload()).copy, false, 'no schedule label');
  assert.equal(verdict(policy({ schedules: ['app/nightly/x'] }), labelled).copy, false);
});

test('a suspended policy, another location, a missing destination or one equal to the source copy nothing', () => {
  assert.equal(verdict(policy({ suspend: true }), upload()).copy, false);
  const elsewhere = upload();
  elsewhere.spec.backupStorageLocation = 'site-c';
  assert.equal(verdict(policy(), elsewhere).copy, false);
  assert.equal(copyVerdict(policy(), undefined, upload(), [], now).copy, false);
  assert.equal(verdict(policy({ sourceLocation: 'site-b', destinationLocation: 'site-b' }), upload()).copy, false);
  const readOnly = { ...destination(['*']), recoverVersions: true };
  assert.deepEqual(copyVerdict(policy(), readOnly, upload(), [], now), {
    copy: false,
    why: 'location "site-b" has spec.recoverVersions: nothing is written there',
  });
  const foreign = upload();
  foreign.spec.dataMover = 'velero';
  assert.equal(verdict(policy(), foreign).copy, false);
});

test('with spec.expire a backup older than the copies’ lifetime is not copied (an expired copy never comes back)', () => {
  assert.equal(verdict(policy({ expire: '2m' }), upload()).copy, true);
  assert.equal(verdict(policy({ expire: '30s' }), upload()).copy, false);
});

test('names stay within 63 characters, differ per policy, and keep a long DataUpload name’s head', () => {
  const long = 'd'.repeat(40) + '-' + 'e'.repeat(100);
  for (const du of [long, 'a'.repeat(54), 'a'.repeat(55), 'x']) {
    const name = policyCopyName(du, 'offsite');
    assert.ok(name.length <= 63, `${name} is ${name.length} characters`);
    assert.match(name, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
    assert.ok(manualCopyName(du, 'site-b'.repeat(20)).length <= 63);
  }
  assert.equal(policyCopyName('a'.repeat(54), 'p'), `${'a'.repeat(54)}-${policyCopyName('x', 'p').slice(2)}`);
  assert.notEqual(policyCopyName(long, 'p'), policyCopyName(long.slice(0, -1) + 'f', 'p'));
});

test('the copy belongs to its backup without spec.expire, and carries spec.expire with it', () => {
  const du = upload({ labels: { 'ferry.dev/schedule': 'nightly', unrelated: 'x' } });
  const owned = policyCopy(policy(), du);
  assert.deepEqual(owned.metadata.ownerReferences, [
    { apiVersion: 'ferry.dev/v1alpha1', kind: 'DataUpload', name: 'db-1', uid: 'u-1', blockOwnerDeletion: false },
  ]);
  assert.deepEqual(owned.metadata.labels, { 'ferry.dev/copy-policy': 'offsite', 'ferry.dev/schedule': 'nightly' });
  assert.deepEqual(owned.spec, { dataUpload: 'db-1', backupStorageLocation: 'site-b', policy: 'offsite' });
  assert.equal(owned.metadata.namespace, 'app');
  const expiring = policyCopy(policy({ expire: '720h' }), du);
  assert.equal(expiring.metadata.ownerReferences, undefined);
  assert.equal(expiring.spec.expire, '720h');
});
