import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { RetryingKube } from '../../../src/shared/kube/retry.ts';
import { updateStatus } from '../../../src/shared/kube/status.ts';
import { isConflict, isTransient, KubeError } from '../../../src/shared/kube/errors.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';

const key = { kind: 'DataUpload' as const, namespace: 'ns', name: 'du' };
const du = (): KubeObject => ({
  apiVersion: 'ferry.dev/v1alpha1',
  kind: 'DataUpload',
  metadata: { name: 'du', namespace: 'ns' },
  spec: {},
  status: { phase: 'New' },
});

function instantRetries(kube: MemoryKube, maxElapsedMs = 60_000) {
  const delays: number[] = [];
  const retrying = new RetryingKube(kube, {
    maxElapsedMs,
    random: () => 1,
    sleep: async (ms) => {
      delays.push(ms);
    },
  });
  return { retrying, delays };
}

test('transient failures (webhook down, 503, refused connections) are retried with growing delays', async () => {
  const kube = new MemoryKube();
  kube.seed(du());
  const { retrying, delays } = instantRetries(kube);
  kube.failNext(
    'replaceStatus',
    'DataUpload',
    new KubeError(
      500,
      'InternalError',
      'Internal error occurred: failed calling webhook "dispatch.ferry.dev": connection refused',
    ),
  );
  kube.failNext('replaceStatus', 'DataUpload', new KubeError(503, 'ServiceUnavailable', 'apiserver restarting'));
  kube.failNext(
    'replaceStatus',
    'DataUpload',
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' }),
  );
  const current = (await retrying.get(key))!;
  const written = await retrying.replaceStatus({ ...current, status: { phase: 'Accepted' } });
  assert.deepEqual(written.status, { phase: 'Accepted' });
  assert.deepEqual(delays, [250, 500, 1000]);
});

test('denials and missing rights are not retried', async () => {
  const kube = new MemoryKube();
  const { retrying, delays } = instantRetries(kube);
  kube.failNext('create', 'DataUpload', new KubeError(403, 'Forbidden', 'forbidden'));
  await assert.rejects(retrying.create(du()), /forbidden/);
  assert.deepEqual(delays, []);
  assert.equal(isTransient(new KubeError(400, 'BadRequest', 'admission webhook denied the request')), false);
  assert.equal(isTransient(new KubeError(429, 'TooManyRequests', 'slow down')), true);
});

test('retries stop once the time budget is spent', async () => {
  const kube = new MemoryKube();
  const retrying = new RetryingKube(kube, { maxElapsedMs: 0, sleep: async () => {} });
  kube.failNext('get', 'DataUpload', new KubeError(503, 'ServiceUnavailable', 'still down'));
  await assert.rejects(retrying.get(key), /still down/);
});

test('updateStatus reapplies the change to the newest object after a Conflict', async () => {
  const kube = new MemoryKube();
  kube.seed(du());
  const stale = (await kube.get(key))!;
  // someone else writes first (the dispatcher recording an attempt)
  kube.mutate(key, (o) => {
    (o.status as Record<string, unknown>).message = 'dispatched';
  });
  let calls = 0;
  const written = await updateStatus(kube, stale, (fresh) => {
    calls++;
    (fresh.status as Record<string, unknown>).phase = 'Accepted';
  });
  assert.equal(calls, 2);
  assert.deepEqual(written.status, { phase: 'Accepted', message: 'dispatched' });
});

test('updateStatus writes nothing when the change says so, and passes its errors on', async () => {
  const kube = new MemoryKube();
  kube.seed(du());
  const obj = (await kube.get(key))!;
  const before = kube.actions.length;
  assert.deepEqual(await updateStatus(kube, obj, () => false), obj);
  assert.equal(kube.actions.length, before);
  await assert.rejects(
    updateStatus(kube, obj, () => {
      throw new Error('phase moved on');
    }),
    /phase moved on/,
  );
  kube.mutate(key, () => {});
  kube.failNext('replaceStatus', 'DataUpload', new KubeError(409, 'Conflict', 'stale'));
  kube.failNext('get', 'DataUpload', new KubeError(403, 'Forbidden', 'no'));
  await assert.rejects(
    updateStatus(kube, obj, () => {}),
    /no/,
  );
  assert.equal(isConflict(new KubeError(409, 'AlreadyExists', 'x')), false);
});
