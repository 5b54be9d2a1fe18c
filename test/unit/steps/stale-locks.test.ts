import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KubeError } from '../../../src/shared/kube/errors.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { encodeLock, Lock, newLockInfo, type LockStore } from '../../../src/engine/lock/lock.ts';
import { lockStore } from '../../../src/engine/repository/lock-store.ts';
import { deadStepReason, removeDeadStepLocks } from '../../../src/steps/stale-locks.ts';
import { testRepo } from '../../support/repo.ts';

const ns = 'ferry-system';

function pod(
  name: string,
  phase: string,
  namespace = ns,
  labels: Record<string, string> = { 'app.kubernetes.io/name': 'ferry' },
): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels }, status: { phase } };
}

/** Saves a fresh (not time-stale) lock held by `hostname`; returns its id. */
async function lockOf(store: LockStore, hostname: string, exclusive = true): Promise<string> {
  return store.save(encodeLock({ ...newLockInfo(exclusive), hostname, pid: 1 }));
}

async function remaining(store: LockStore): Promise<string[]> {
  const ids: string[] = [];
  for await (const id of store.list()) ids.push(id);
  return ids.sort();
}

const failedPod = 'ferry-down-0123456789abcdef-delete-1-x7k2p';
const runningPod = 'ferry-up-0123456789abcdef-transfer-2-q9w8e';
const gonePod = 'ferry-up-fedcba9876543210-transfer-1-abcde';

test('the decision: terminated or vanished step pods lose their locks; live, unknown and foreign holders keep them', () => {
  const pods = [
    pod(failedPod, 'Failed'),
    pod('ferry-up-0123456789abcdef-delete-3-zzzzz', 'Succeeded'),
    pod(runningPod, 'Running'),
    pod('ferry-up-aaaa-snapshot-1-ppppp', 'Pending'),
  ];
  assert.match(deadStepReason(failedPod, pods), /step pod ferry-down-.* has failed/);
  assert.match(deadStepReason('ferry-up-0123456789abcdef-delete-3-zzzzz', pods), /has ended/);
  assert.equal(deadStepReason(runningPod, pods), '');
  assert.equal(deadStepReason('ferry-up-aaaa-snapshot-1-ppppp', pods), '');
  assert.match(deadStepReason(gonePod, pods), /no longer exists/);
  // a DataCopy's attempt killed mid-copy leaves its locks on both repositories
  assert.match(deadStepReason('ferry-copy-0123456789abcdef-a1-k3j9q', pods), /no longer exists/);
  for (const foreign of [
    'laptop',
    'backup-host-1',
    'ferry-dispatcher-6d4f7b9c8-abcde',
    'ferry-up-xyz-transfer-1-abcde',
    'ferry-copy-0123456789abcdef-b1-k3j9q',
    '',
  ]) {
    assert.equal(deadStepReason(foreign, pods), '', `a lock held by "${foreign}" is not a step's to judge`);
  }
});

test('a gone maintenance pod made from a ferry-maint CronJob is judged dead; a lookalike is not', () => {
  assert.match(deadStepReason('ferry-maint-check-data-main-29391840-k2j4x', []), /no longer exists/);
  assert.match(deadStepReason('ferry-maint-prune-s3-eu.west-29391840-abcde', []), /no longer exists/);
  for (const foreign of ['ferry-maint-prune', 'ferry-maint-backup-main-29391840-abcde', 'ferry-maint-check-main']) {
    assert.equal(deadStepReason(foreign, []), '', `a lock held by "${foreign}" is not a step's to judge`);
  }
});

test('a pod name longer than 63 characters is matched by the hostname Kubernetes cut from it', () => {
  const long = `ferry-up-0123456789abcdef-${'x'.repeat(40)}-1-abcde`;
  const cut = long.slice(0, 63).replace(/[-.]+$/, '');
  assert.match(deadStepReason(cut, [pod(long, 'Failed')]), /has failed/);
  assert.equal(deadStepReason(cut, [pod(long, 'Running')]), '');
});

test('removes exactly the locks of dead step pods from the repository', async () => {
  const store = lockStore(await testRepo());
  const kube = new MemoryKube();
  kube.seed(pod(failedPod, 'Failed'), pod(runningPod, 'Running'), pod(gonePod, 'Running', 'elsewhere'));
  const dead = await lockOf(store, failedPod);
  const vanished = await lockOf(store, gonePod, false);
  const kept = [await lockOf(store, runningPod), await lockOf(store, 'laptop')];
  const removed = await removeDeadStepLocks(kube, ns, store);
  assert.deepEqual(removed.map((r) => r.id).sort(), [dead, vanished].sort());
  assert.deepEqual(await remaining(store), kept.sort());
  assert.deepEqual(
    kube.actions.filter((a) => a.kind === 'Pod').map((a) => `${a.verb} ${a.namespace}`),
    ['list ferry-system'],
    "pods are listed once, in ferry's namespace only",
  );
});

test("a dead delete step's exclusive lock no longer blocks the next lock once removed", async () => {
  const store = lockStore(await testRepo());
  const kube = new MemoryKube();
  kube.seed(pod(failedPod, 'Failed'));
  await lockOf(store, failedPod, true);
  await assert.rejects(Lock.acquire(store, { exclusive: false }), /locked by .*ferry-down-.*an exclusive lock/);
  await removeDeadStepLocks(kube, ns, store);
  const l = await Lock.acquire(store, { exclusive: false });
  await l.release();
});

test('when pods cannot be listed every lock stays, and without locks no pod is listed', async () => {
  const store = lockStore(await testRepo());
  const kube = new MemoryKube();
  assert.deepEqual(await removeDeadStepLocks(kube, ns, store), []);
  assert.equal(kube.actions.length, 0);
  const id = await lockOf(store, gonePod);
  kube.failNext('list', 'Pod', new KubeError(403, 'Forbidden', 'pods is forbidden'));
  const warnings: string[] = [];
  const log = {
    debug() {},
    info() {},
    warn: (m: string) => void warnings.push(m),
    error() {},
    with() {
      return log;
    },
  };
  assert.deepEqual(await removeDeadStepLocks(kube, ns, store, log), []);
  assert.deepEqual(await remaining(store), [id]);
  assert.match(warnings.join('\n'), /cannot list the step pods/);
});
