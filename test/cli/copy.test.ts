// `ferry copy DATAUPLOAD --to LOCATION`: a mistake is bad usage naming the argument and what is allowed, before
// anything is created; the DataCopy made belongs to its backup unless --expire, and a second copy to the same
// place finds the first.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCopy, type CopyRequest } from '../../src/cli/copy/copy.ts';
import { policyColumns } from '../../src/cli/copy/columns.ts';
import { describeCopy, describePolicy } from '../../src/cli/copy/describe.ts';
import { copyOutcome } from '../../src/cli/copy/result.ts';
import { waitForEnd } from '../../src/cli/kube/wait.ts';
import { UsageError } from '../../src/cli/run.ts';
import type { KubeObject } from '../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../src/shared/kube/memory.ts';

function location(name: string, allowedNamespaces: string[]): KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'BackupStorageLocation',
    metadata: { name, namespace: 'ferry-system' },
    spec: {
      s3: { endpoint: 'http://b:9000', bucket: name },
      credential: { name: 'c' },
      repositoryPassword: { name: 'p', key: 'k' },
      allowedNamespaces,
    },
  };
}

function upload(name: string, phase: string, snapshotID?: string): KubeObject {
  return {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name, namespace: 'app', uid: `uid-${name}` },
    spec: { sourcePVC: 'data', backupStorageLocation: 'site-a' },
    status: { phase, snapshotID },
  };
}

function cluster(): MemoryKube {
  const kube = new MemoryKube();
  kube.seed(
    location('site-a', ['app']),
    location('site-b', ['app']),
    location('closed', ['other']),
    upload('done', 'Completed', 'a'.repeat(64)),
    upload('running', 'InProgress'),
    upload('snapshot-only', 'Completed'),
  );
  return kube;
}

const req = (over: Partial<CopyRequest> = {}): CopyRequest => ({
  dataUpload: 'done',
  to: 'site-b',
  namespace: 'app',
  ferryNamespace: 'ferry-system',
  ...over,
});

async function refused(kube: MemoryKube, r: CopyRequest, message: RegExp): Promise<void> {
  await assert.rejects(createCopy(kube, r), (err: Error) => {
    assert.ok(err instanceof UsageError, `${err.message} is not bad usage`);
    assert.match(err.message, message);
    return true;
  });
  assert.equal(kube.all('DataCopy').length, 0, 'nothing is created');
}

test('mistakes are bad usage naming the argument and what is allowed, and create nothing', async () => {
  const kube = cluster();
  await refused(kube, req({ dataUpload: 'gone' }), /^DATAUPLOAD: DataUpload "gone" does not exist in namespace app/);
  await refused(
    kube,
    req({ dataUpload: 'running' }),
    /^DATAUPLOAD: DataUpload "running" is InProgress; only a Completed/,
  );
  await refused(kube, req({ dataUpload: 'snapshot-only' }), /without a repository snapshot/);
  await refused(
    kube,
    req({ to: 'nowhere' }),
    /^--to: location "nowhere" does not exist; the locations are: closed, site-a, site-b$/,
  );
  await refused(kube, req({ to: 'site-a' }), /^--to: the backup is already in location "site-a"/);
  await refused(kube, req({ to: 'closed' }), /^--to: location "closed" allows namespaces \[other\], not "app"$/);
  const readOnly = location('read-only', ['*']);
  (readOnly.spec as { recoverVersions?: boolean }).recoverVersions = true;
  kube.seed(readOnly);
  await refused(kube, req({ to: 'read-only' }), /^--to: location "read-only" has spec\.recoverVersions/);
});

test('the copy is named after the backup and the location, belongs to the backup, and is made once', async () => {
  const kube = cluster();
  const made = await createCopy(kube, req());
  assert.equal(made.metadata.name, 'done-to-site-b');
  assert.deepEqual(made.spec, { dataUpload: 'done', backupStorageLocation: 'site-b' });
  assert.deepEqual(made.metadata.ownerReferences, [
    { apiVersion: 'ferry.dev/v1alpha1', kind: 'DataUpload', name: 'done', uid: 'uid-done', blockOwnerDeletion: false },
  ]);
  await assert.rejects(createCopy(kube, req()), /already copied to "site-b" by DataCopy done-to-site-b \(New\)/);
  assert.equal(kube.all('DataCopy').length, 1);
  // a policy's copy into the same location counts too: two copies would share one snapshot there
  const other = cluster();
  other.seed({
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataCopy',
    metadata: { name: 'done-1a2b3c4d', namespace: 'app' },
    spec: { dataUpload: 'done', backupStorageLocation: 'site-b', policy: 'offsite' },
    status: { phase: 'Completed' },
  } as KubeObject);
  await assert.rejects(createCopy(other, req()), /already copied to "site-b" by DataCopy done-1a2b3c4d \(Completed\)/);
});

test('with --expire the copy carries spec.expire and no owner', async () => {
  const kube = cluster();
  kube.seed(location('site-c', ['*']));
  const made = await createCopy(kube, req({ to: 'site-c', expire: '720h', timeout: '1h' }));
  assert.equal(made.metadata.ownerReferences, undefined);
  assert.deepEqual(made.spec, {
    dataUpload: 'done',
    backupStorageLocation: 'site-c',
    expire: '720h',
    operationTimeout: '1h',
  });
  const text = describeCopy(made, []);
  assert.match(text, /To location:\s+site-c/);
  assert.match(text, /Policy:\s+<by hand>/);
  assert.match(text, /Expire:\s+720h after completion/);
});

test('--wait follows the copy to its end: Completed says what was sent, Failed fails with its message', async () => {
  const kube = cluster();
  kube.seed(location('site-c', ['*']));
  const made = await createCopy(kube, req());
  const key = { kind: 'DataCopy' as const, namespace: 'app', name: made.metadata.name };
  setTimeout(() => kube.mutate(key, (c) => void (c.status = { phase: 'InProgress', attempts: 1 })), 5);
  setTimeout(
    () =>
      kube.mutate(key, (c) => {
        c.status = {
          phase: 'Completed',
          snapshotID: 'b'.repeat(64),
          completionTimestamp: new Date().toISOString(),
          stats: { blobs: 12, bytesSent: 3 * 1024 * 1024, durationSeconds: 4 },
        };
      }),
    30,
  );
  const done = await waitForEnd(kube, 'DataCopy', 'app', made.metadata.name, { quiet: true, pollMs: 2 });
  assert.match(
    copyOutcome(done),
    /^copy done-to-site-b Completed: snapshot bbbbbbbb in site-b, 3\.0 MiB sent \(12 new blobs\), took /,
  );

  const failing = await createCopy(kube, req({ to: 'site-c' }));
  kube.mutate({ ...key, name: failing.metadata.name }, (c) => {
    c.status = { phase: 'Failed', message: 'DataUpload app/done is gone' };
  });
  await assert.rejects(
    waitForEnd(kube, 'DataCopy', 'app', failing.metadata.name, { quiet: true, pollMs: 2 }),
    /^Error: DataCopy app\/done-to-site-c failed: DataUpload app\/done is gone$/,
  );
});

test('a policy’s table row and description show what it copies and how its copies stand', () => {
  const policy = {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'CopyPolicy',
    metadata: { name: 'offsite', namespace: 'ferry-system', creationTimestamp: new Date().toISOString() },
    spec: { sourceLocation: 'site-a', destinationLocation: 'site-b', schedules: ['app/nightly'], expire: '720h' },
    status: {
      copiesCompleted: 4,
      copiesRetrying: 1,
      conditions: [
        { type: 'Ready', status: 'False', reason: 'CopiesRetrying', message: '1 retrying', lastTransitionTime: '' },
      ],
    },
  } as const;
  const row = policyColumns.filter((c) => !c.wide).map((c) => c.value(policy as never));
  assert.deepEqual(row.slice(0, 6), ['offsite', 'site-a', 'site-b', '4', '1', 'false']);
  const text = describePolicy(policy as never, [], []);
  assert.match(text, /Schedules:\s+app\/nightly/);
  assert.match(text, /Namespaces:\s+every namespace the destination allows/);
  assert.match(text, /Expire:\s+720h after each copy completes/);
  assert.match(text, /Ready\s+False\s+CopiesRetrying\s+1 retrying/);
});
