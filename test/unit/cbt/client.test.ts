// The SnapshotMetadata client against a small gRPC server over node:http2 with TLS, playing the csi-snapshot-metadata
// sidecar, honest and hostile.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAllocated, getDelta, type MetadataCall } from '../../../src/shared/cbt/client.ts';
import { GrpcError } from '../../../src/shared/cbt/grpc-call.ts';
import { makeTestCertificates } from '../../support/test-ca.ts';
import {
  answer,
  frame,
  metadataResponse,
  startMetadataServer,
  type Handler,
  type MetadataServer,
} from '../../support/snapshot-metadata-server.ts';

let server: MetadataServer;
let call: MetadataCall;

before(async () => {
  server = await startMetadataServer();
  call = { target: { address: server.address, ca: server.ca }, token: 'tok', namespace: 'ns' };
});
after(() => server.close());

const response = metadataResponse;
const ok = answer;

test('GetMetadataAllocated: the request names token, namespace and snapshot; streamed blocks come back merged', async () => {
  let seen: { path: string; request: Map<number, string | bigint> } | undefined;
  server.handler = (stream, path, request) => {
    seen = { path, request };
    ok(
      stream,
      frame(
        response(1 << 30, [
          [0, 4096],
          [4096, 4096],
          [65536, 4096],
        ]),
      ),
      frame(response(1 << 30, [[1 << 20, 8192]])),
    );
  };
  const list = await getAllocated(call, 'snap-1');
  assert.equal(seen?.path, '/snapshotmetadata.SnapshotMetadata/GetMetadataAllocated');
  assert.deepEqual(
    [...seen!.request],
    [
      [1, 'tok'],
      [2, 'ns'],
      [3, 'snap-1'],
    ],
  );
  assert.deepEqual(list, {
    capacity: 1 << 30,
    ranges: [
      { offset: 0, length: 8192 },
      { offset: 65536, length: 4096 },
      { offset: 1 << 20, length: 8192 },
    ],
  });
});

test('GetMetadataDelta sends the base CSI handle and the target name; a message split across data frames is whole', async () => {
  let seen: Map<number, string | bigint> | undefined;
  server.handler = (stream, _path, request) => {
    seen = request;
    const all = frame(response(1 << 20, [[8192, 4096]]));
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.write(all.subarray(0, 3));
    setTimeout(() => stream.end(all.subarray(3)), 20);
  };
  const list = await getDelta(call, 'handle-a', 'snap-2');
  assert.deepEqual(
    [...seen!],
    [
      [1, 'tok'],
      [2, 'ns'],
      [3, 'handle-a'],
      [4, 'snap-2'],
    ],
  );
  assert.deepEqual(list.ranges, [{ offset: 8192, length: 4096 }]);
});

test('ranges out of order, overlapping or past the capacity are sorted, merged and clipped: never fewer bytes', async () => {
  server.handler = (stream) =>
    ok(
      stream,
      frame(
        response(100_000, [
          [50_000, 100],
          [0, 10],
          [5, 20],
          [50_050, 10],
          [99_990, 500],
        ]),
      ),
    );
  assert.deepEqual((await getDelta(call, 'a', 'b')).ranges, [
    { offset: 0, length: 25 },
    { offset: 50_000, length: 100 },
    { offset: 99_990, length: 10 },
  ]);
});

test('hostile responses are clear errors naming what was wrong', async () => {
  const cases: [string, Handler, RegExp][] = [
    [
      'grpc-status error in trailers',
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        s.on('wantTrailers', () => s.sendTrailers({ 'grpc-status': '7', 'grpc-message': 'not%20allowed' }));
        s.end();
      },
      /GetMetadataDelta: PERMISSION_DENIED: not allowed/,
    ],
    [
      'trailers-only error',
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '5' }, { endStream: true });
      },
      /NOT_FOUND/,
    ],
    ['truncated message', (s) => ok(s, frame(response(100, [[0, 10]])).subarray(0, 9)), /ended inside a message/],
    ['huge length prefix', (s) => ok(s, frame(Buffer.alloc(10), 0xfffffff0)), /past the 4194304-byte limit/],
    ['compressed message', (s) => ok(s, frame(response(100, []), undefined, 1)), /compressed message/],
    [
      'no grpc-status',
      (s) => {
        s.respond({ ':status': 200, 'content-type': 'application/grpc' });
        s.end(frame(response(100, [])));
      },
      /without a grpc-status/,
    ],
    ['negative offset', (s) => ok(s, frame(response(100, [[-1n, 10]]))), /block_metadata\[0\]\.byte_offset is -1/],
    ['garbage protobuf', (s) => ok(s, frame(Buffer.from([0x1a, 0x7f, 0x01]))), /runs past the end of the message/],
    [
      'capacity changing mid-stream',
      (s) => ok(s, frame(response(100, [])), frame(response(200, []))),
      /volume_capacity_bytes changed from 100 to 200/,
    ],
    ['no message at all', (s) => ok(s), /sent no response message/],
    [
      'HTTP error',
      (s) => {
        s.respond({ ':status': 404 }, { endStream: true });
      },
      /HTTP status 404/,
    ],
  ];
  for (const [name, h, expected] of cases) {
    server.handler = h;
    await assert.rejects(getDelta(call, 'a', 'b'), expected, name);
  }
});

test('a grpc-status error keeps its code, so a caller can tell a missing base snapshot from a denial', async () => {
  server.handler = (s) =>
    s.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '5' }, { endStream: true });
  const err = await getDelta(call, 'gone', 'b').catch((e: unknown) => e);
  assert.ok(err instanceof GrpcError && err.code === 5, String(err));
});

test('a server whose certificate the given CA did not sign is refused', async () => {
  server.handler = (s) => ok(s, frame(response(100, [])));
  const other = await mkdtemp(join(tmpdir(), 'ferry-cbt-other-'));
  try {
    const certs = await makeTestCertificates(other);
    const wrong = { ...call, target: { ...call.target, ca: await readFile(certs.caFile) } };
    await assert.rejects(getAllocated(wrong, 's'), /certificate/i);
  } finally {
    await rm(other, { recursive: true });
  }
});
