import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryKube } from '../../../src/shared/kube/memory.ts';
import { isAlreadyExists, isConflict, KubeError } from '../../../src/shared/kube/errors.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';

function pvc(name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'ns', labels },
    spec: { size: 1 },
  };
}

test('create refuses a taken name; get returns copies', async () => {
  const kube = new MemoryKube();
  const made = await kube.create(pvc('a'));
  assert.ok(made.metadata.uid && made.metadata.resourceVersion);
  await assert.rejects(kube.create(pvc('a')), isAlreadyExists);
  const got = await kube.get({ kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'a' });
  (got!.spec as { size: number }).size = 9;
  assert.equal(
    (kube.peek({ kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'a' })!.spec as { size: number }).size,
    1,
  );
});

test('a stale resourceVersion is a Conflict; replace keeps status and replaceStatus keeps spec', async () => {
  const kube = new MemoryKube();
  const v1 = await kube.create({ ...pvc('a'), status: { phase: 'Pending' } });
  const v2 = await kube.replaceStatus({ ...v1, spec: { size: 5 }, status: { phase: 'Bound' } });
  assert.deepEqual(v2.spec, { size: 1 });
  assert.deepEqual(v2.status, { phase: 'Bound' });
  await assert.rejects(kube.replace({ ...v1, spec: { size: 2 } }), isConflict);
  const v3 = await kube.replace({ ...v2, spec: { size: 2 }, status: { phase: 'Lost' } });
  assert.deepEqual(v3.status, { phase: 'Bound' });
  assert.equal(v3.metadata.generation, 2);
});

test('delete waits for finalizers; removing the last one deletes', async () => {
  const kube = new MemoryKube();
  const key = { kind: 'PersistentVolumeClaim' as const, namespace: 'ns', name: 'a' };
  await kube.create({ ...pvc('a'), metadata: { name: 'a', namespace: 'ns', finalizers: ['x/y'] } });
  assert.equal(await kube.delete(key), true);
  const held = await kube.get(key);
  assert.ok(held?.metadata.deletionTimestamp);
  await kube.patch(
    key,
    [
      { op: 'test', path: '/metadata/finalizers/0', value: 'x/y' },
      { op: 'remove', path: '/metadata/finalizers/0' },
    ],
    { type: 'json' },
  );
  assert.equal(await kube.get(key), undefined);
  assert.equal(await kube.delete(key), false);
});

test('merge patches check a resourceVersion they carry; json patch tests fail as Conflict', async () => {
  const kube = new MemoryKube();
  const key = { kind: 'PersistentVolumeClaim' as const, namespace: 'ns', name: 'a' };
  const made = await kube.create(pvc('a', { keep: 'me' }));
  await kube.patch(key, { metadata: { labels: { add: 'x' } } });
  await assert.rejects(
    kube.patch(key, { metadata: { resourceVersion: made.metadata.resourceVersion, labels: { late: 'y' } } }),
    isConflict,
  );
  await assert.rejects(
    kube.patch(key, [{ op: 'test', path: '/metadata/labels/keep', value: 'other' }], { type: 'json' }),
    isConflict,
  );
  assert.deepEqual(kube.peek(key)!.metadata.labels, { keep: 'me', add: 'x' });
});

test('list filters by namespace and equality label selectors', async () => {
  const kube = new MemoryKube();
  await kube.create(pvc('a', { app: 'x', tier: 'db' }));
  await kube.create(pvc('b', { app: 'x' }));
  await kube.create({ ...pvc('c', { app: 'x' }), metadata: { name: 'c', namespace: 'other', labels: { app: 'x' } } });
  const names = async (opts: object) =>
    (await kube.list('PersistentVolumeClaim', opts)).map((o) => o.metadata.name).sort();
  assert.deepEqual(await names({ namespace: 'ns', labelSelector: 'app=x' }), ['a', 'b']);
  assert.deepEqual(await names({ labelSelector: 'app=x,tier=db' }), ['a']);
  assert.deepEqual(await names({ labelSelector: 'app==x' }), ['a', 'b', 'c']);
  assert.deepEqual(await names({ labelSelector: 'tier' }), ['a']);
});

test('reactors run after a call and injected failures fail the next matching call', async () => {
  const kube = new MemoryKube();
  kube.on('create', 'PersistentVolumeClaim', (obj, k) =>
    k.mutate({ kind: 'PersistentVolumeClaim', namespace: 'ns', name: obj.metadata.name }, (o) => {
      o.status = { phase: 'Bound' };
    }),
  );
  await kube.create(pvc('a'));
  assert.deepEqual(kube.peek({ kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'a' })!.status, {
    phase: 'Bound',
  });
  kube.failNext('get', 'PersistentVolumeClaim', new KubeError(503, 'ServiceUnavailable', 'down'));
  await assert.rejects(kube.get({ kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'a' }), /down/);
  assert.ok(await kube.get({ kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'a' }));
});
