// The transfer step's use of changed-block tracking, against a fake SnapshotMetadata sidecar: what it asks for, with
// which token, and how every obstacle becomes a fuller read with its reason rather than a failed (or wrong) backup.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { blockChanges } from '../../../src/steps/data/block-changes.ts';
import type { DataUpload } from '../../../src/shared/api/types.ts';
import type { SnapshotEntry } from '../../../src/engine/operations/snapshots.ts';
import type { KubeObject } from '../../../src/shared/kube/kube.ts';
import {
  answer,
  frame,
  metadataResponse,
  refuse,
  startMetadataServer,
  type MetadataServer,
} from '../../support/snapshot-metadata-server.ts';
import { dataUpload, ferryNamespace, harness } from './harness.ts';

let server: MetadataServer;
before(async () => {
  server = await startMetadataServer();
});
after(() => server.close());

const driver = 'local.csi.ferry.dev';
const parentID = 'a'.repeat(64);
const parent = { id: parentID, snapshot: {} } as SnapshotEntry;
// a pod's own token: only its subject is read
const ownToken = async (): Promise<string> =>
  `x.${Buffer.from(JSON.stringify({ sub: 'system:serviceaccount:ferry-system:ferry-step-transfer' })).toString('base64url')}.y`;

function setup(withService = true) {
  const h = harness('transfer');
  const du = dataUpload(
    {},
    {
      phase: 'InProgress',
      volumeMode: 'Block',
      exposure: { namespace: ferryNamespace, volumeSnapshot: 'ferry-up-abc' },
      changeTracking: { driver, snapshotHandle: 'snap-now' },
    },
  );
  const earlier = dataUpload(
    {},
    {
      phase: 'Completed',
      snapshotID: parentID,
      changeTracking: { driver, snapshotHandle: 'snap-before', retainedContent: 'snapcontent-before' },
    },
  );
  earlier.metadata = { ...earlier.metadata, name: 'du-0', uid: '0b7c7a2e-1111-4c3e-9f00-000000000000' };
  h.kube.seed(earlier);
  if (withService)
    h.kube.seed({
      apiVersion: 'cbt.storage.k8s.io/v1alpha1',
      kind: 'SnapshotMetadataService',
      metadata: { name: driver },
      spec: { address: server.address, caCert: server.ca.toString('base64'), audience: 'cbt-audience' },
    } as KubeObject);
  return { h, du: du as DataUpload };
}

test('asks for the blocks changed since the parent backup kept snapshot, with a pod-bound token for the audience', async () => {
  const { h, du } = setup();
  const calls: { path: string; request: Map<number, string | bigint> }[] = [];
  server.handler = (s, path, request) => {
    calls.push({ path, request });
    answer(s, frame(metadataResponse(1 << 20, [[4096, 4096]])));
  };
  const got = await blockChanges(h.ctx, du, 1 << 20, parent, ownToken);
  assert.deepEqual(got, { changed: { since: parentID, ranges: [{ offset: 4096, length: 4096 }] } });
  assert.equal(calls[0].path, '/snapshotmetadata.SnapshotMetadata/GetMetadataDelta');
  const token = 'token-of-ferry-system-ferry-step-transfer-for-cbt-audience';
  assert.deepEqual(
    [...calls[0].request],
    [
      [1, token],
      [2, ferryNamespace],
      [3, 'snap-before'],
      [4, 'ferry-up-abc'],
    ],
  );
  assert.deepEqual(h.kube.tokens[0].spec, {
    audiences: ['cbt-audience'],
    expirationSeconds: 600,
    boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: h.ctx.settings.podName },
  });
});

test("the parent's snapshot gone from the driver: the allocated blocks are read, and status says why", async () => {
  const { h, du } = setup();
  server.handler = (s, path) =>
    path.endsWith('GetMetadataDelta')
      ? refuse(s, 5, 'snapshot snap-before not found')
      : answer(s, frame(metadataResponse(1 << 20, [[0, 8192]])));
  const got = await blockChanges(h.ctx, du, 2 << 20, parent, ownToken);
  assert.deepEqual(got.allocated, [
    { offset: 0, length: 8192 },
    // the device is bigger than the snapshot: what lies past it is read
    { offset: 1 << 20, length: 1 << 20 },
  ]);
  assert.match(
    got.reason ?? '',
    /changed blocks since the parent's CSI snapshot are unavailable: .*NOT_FOUND: snapshot snap-before not found/,
  );
});

test('no SnapshotMetadataService for the driver, or a parent that kept no snapshot: said so, nothing asked', async () => {
  const none = setup(false);
  assert.deepEqual(await blockChanges(none.h.ctx, none.du, 1 << 20, parent, ownToken), {
    reason: `the CSI driver ${driver} offers no SnapshotMetadataService`,
  });
  const { h, du } = setup();
  server.handler = (s) => answer(s, frame(metadataResponse(1 << 20, [])));
  const other = { id: 'b'.repeat(64), snapshot: {} } as SnapshotEntry;
  const got = await blockChanges(h.ctx, du, 1 << 20, other, ownToken);
  assert.deepEqual(got.allocated, []);
  assert.match(got.reason ?? '', /the parent backup \(snapshot bbbbbbbb\) kept no CSI snapshot/);
});

test('a broken answer on both calls falls back to a full read with both reasons', async () => {
  const { h, du } = setup();
  server.handler = (s) => answer(s, frame(Buffer.alloc(3), 0x7fffffff));
  const got = await blockChanges(h.ctx, du, 1 << 20, parent, ownToken);
  assert.equal(got.changed, undefined);
  assert.equal(got.allocated, undefined);
  assert.match(
    got.reason ?? '',
    /changed blocks .* unavailable: .*byte limit; the allocated blocks are unavailable: .*byte limit/,
  );
});

test("a service's long error message is cut to what status holds", async () => {
  const { h, du } = setup();
  server.handler = (s) => refuse(s, 13, 'x'.repeat(6000));
  const got = await blockChanges(h.ctx, du, 1 << 20, parent, ownToken);
  assert.equal(got.reason?.length, 1024);
  assert.match(
    got.reason ?? '',
    /^the changed blocks since the parent's CSI snapshot are unavailable: .*INTERNAL: x+…$/,
  );
});
