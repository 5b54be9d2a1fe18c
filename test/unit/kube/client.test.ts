import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { HttpKube } from '../../../src/shared/kube/client.ts';
import { isAlreadyExists, isConflict, KubeError } from '../../../src/shared/kube/errors.ts';
import { resourcePath } from '../../../src/shared/kube/resources.ts';

interface Seen {
  method: string;
  url: string;
  auth?: string;
  contentType?: string;
  body: string;
}

/** A stand-in apiserver answering from a table of `METHOD path` → [status, body]. */
async function fakeApiserver(routes: Record<string, [number, unknown]>) {
  const seen: Seen[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    seen.push({
      method: req.method!,
      url: req.url!,
      auth: req.headers.authorization,
      contentType: req.headers['content-type'],
      body,
    });
    const [status, answer] = routes[`${req.method} ${req.url}`] ?? [
      404,
      { kind: 'Status', reason: 'NotFound', message: 'not found' },
    ];
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'c', server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, skipTLSVerify: true },
    ],
    users: [{ name: 'u', token: 'the-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const kube = new HttpKube(kc);
  return {
    kube,
    seen,
    close: () => {
      kube.close();
      server.close();
    },
  };
}

test('paths follow the kind table: core, grouped, cluster-scoped, status subresource', () => {
  assert.equal(
    resourcePath('PersistentVolumeClaim', 'ns', 'data'),
    '/api/v1/namespaces/ns/persistentvolumeclaims/data',
  );
  assert.equal(
    resourcePath('VolumeSnapshotContent', undefined, 'c1'),
    '/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents/c1',
  );
  assert.equal(
    resourcePath('DataUpload', 'ns', 'du', 'status'),
    '/apis/ferry.dev/v1alpha1/namespaces/ns/datauploads/du/status',
  );
  assert.equal(resourcePath('DataUpload', undefined), '/apis/ferry.dev/v1alpha1/datauploads');
  assert.throws(() => resourcePath('Secret', undefined, 's'), /needs a namespace/);
});

test('get, create, status update, patch and delete speak the apiserver protocol with the configured token', async () => {
  const du = {
    apiVersion: 'ferry.dev/v1alpha1',
    kind: 'DataUpload',
    metadata: { name: 'du', namespace: 'ns', resourceVersion: '7' },
    spec: {},
  };
  const { kube, seen, close } = await fakeApiserver({
    'GET /apis/ferry.dev/v1alpha1/namespaces/ns/datauploads/du': [200, du],
    'POST /apis/ferry.dev/v1alpha1/namespaces/ns/datauploads': [
      409,
      { kind: 'Status', reason: 'AlreadyExists', message: 'datauploads.ferry.dev "du" already exists' },
    ],
    'PUT /apis/ferry.dev/v1alpha1/namespaces/ns/datauploads/du/status': [
      409,
      { kind: 'Status', reason: 'Conflict', message: 'the object has been modified' },
    ],
    'PATCH /api/v1/namespaces/ns/persistentvolumeclaims/p': [
      200,
      { kind: 'PersistentVolumeClaim', metadata: { name: 'p' } },
    ],
    'DELETE /api/v1/persistentvolumes/pv1': [200, { kind: 'Status', status: 'Success' }],
  });
  try {
    assert.deepEqual(await kube.get({ kind: 'DataUpload', namespace: 'ns', name: 'du' }), du);
    assert.equal(await kube.get({ kind: 'DataUpload', namespace: 'ns', name: 'gone' }), undefined);
    await assert.rejects(
      kube.create(du),
      (e) => isAlreadyExists(e) && (e as KubeError).message.includes('already exists'),
    );
    await assert.rejects(kube.replaceStatus(du), isConflict);
    await kube.patch(
      { kind: 'PersistentVolumeClaim', namespace: 'ns', name: 'p' },
      { metadata: { labels: { a: 'b' } } },
    );
    assert.equal(await kube.delete({ kind: 'PersistentVolume', name: 'pv1' }, { uid: 'u1' }), true);
    assert.equal(await kube.delete({ kind: 'PersistentVolume', name: 'pv2' }), false);
    assert.ok(seen.every((s) => s.auth === 'Bearer the-token'));
    const patch = seen.find((s) => s.method === 'PATCH')!;
    assert.equal(patch.contentType, 'application/merge-patch+json');
    assert.deepEqual(JSON.parse(patch.body), { metadata: { labels: { a: 'b' } } });
    const del = seen.find((s) => s.url.endsWith('/pv1'))!;
    assert.deepEqual(JSON.parse(del.body).preconditions, { uid: 'u1' });
  } finally {
    close();
  }
});

test('list follows continue tokens and gives items their apiVersion and kind', async () => {
  const { kube, seen, close } = await fakeApiserver({
    'GET /apis/snapshot.storage.k8s.io/v1/namespaces/ns/volumesnapshots?limit=500&labelSelector=ferry.dev%2Fuid%3Dabc':
      [200, { items: [{ metadata: { name: 'a' } }], metadata: { continue: 'next' } }],
    'GET /apis/snapshot.storage.k8s.io/v1/namespaces/ns/volumesnapshots?limit=500&labelSelector=ferry.dev%2Fuid%3Dabc&continue=next':
      [200, { items: [{ metadata: { name: 'b' } }], metadata: {} }],
  });
  try {
    const items = await kube.list('VolumeSnapshot', { namespace: 'ns', labelSelector: 'ferry.dev/uid=abc' });
    assert.deepEqual(
      items.map((i) => [i.apiVersion, i.kind, i.metadata.name]),
      [
        ['snapshot.storage.k8s.io/v1', 'VolumeSnapshot', 'a'],
        ['snapshot.storage.k8s.io/v1', 'VolumeSnapshot', 'b'],
      ],
    );
    assert.equal(seen.length, 2);
  } finally {
    close();
  }
});
