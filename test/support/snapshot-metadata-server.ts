// A small gRPC server over node:http2 with TLS playing the csi-snapshot-metadata sidecar for unit tests: each call's
// path and decoded request go to a handler the test sets, which answers with framed messages, honest or hostile.
// Its protobuf writer and reader are its own, independent of the client under test.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createSecureServer, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeTestCertificates } from './test-ca.ts';

export type Handler = (stream: ServerHttp2Stream, path: string, request: Map<number, string | bigint>) => void;

export interface MetadataServer {
  address: string;
  ca: Buffer;
  handler: Handler;
  close(): Promise<void>;
}

export async function startMetadataServer(): Promise<MetadataServer> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-cbt-'));
  const certs = await makeTestCertificates(dir);
  const server = createSecureServer({ cert: await readFile(certs.certFile), key: await readFile(certs.keyFile) });
  const out: MetadataServer = {
    address: '',
    ca: await readFile(certs.caFile),
    handler: (s) => s.respond({ ':status': 200, 'grpc-status': '12' }, { endStream: true }),
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true });
    },
  };
  server.on('stream', (stream, headers) => {
    const parts: Buffer[] = [];
    stream.on('data', (d: Buffer) => parts.push(d));
    stream.on('end', () => out.handler(stream, String(headers[':path']), fields(Buffer.concat(parts).subarray(5))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  out.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  return out;
}

function varint(v: bigint): Buffer {
  const out: number[] = [];
  let n = BigInt.asUintN(64, v);
  do {
    out.push(Number(n & 0x7fn) | (n > 0x7fn ? 0x80 : 0));
    n >>= 7n;
  } while (n > 0n);
  return Buffer.from(out);
}

const int = (field: number, v: number | bigint): Buffer =>
  Buffer.concat([varint(BigInt(field << 3)), varint(BigInt(v))]);
const bytes = (field: number, b: Buffer): Buffer =>
  Buffer.concat([varint(BigInt((field << 3) | 2)), varint(BigInt(b.length)), b]);

/** A GetMetadata*Response (VARIABLE_LENGTH) of `capacity` bytes with [offset, size] blocks. */
export function metadataResponse(capacity: number, blocks: [number | bigint, number | bigint][]): Buffer {
  return Buffer.concat([
    int(1, 2),
    int(2, capacity),
    ...blocks.map(([o, s]) => bytes(3, Buffer.concat([int(1, o), int(2, s)]))),
  ]);
}

/** A gRPC message frame; `length` and `flag` may lie. */
export function frame(message: Buffer, length = message.length, flag = 0): Buffer {
  const prefix = Buffer.alloc(5);
  prefix[0] = flag;
  prefix.writeUInt32BE(length, 1);
  return Buffer.concat([prefix, message]);
}

/** Answers 200 with `frames` and grpc-status 0 in the trailers. */
export function answer(stream: ServerHttp2Stream, ...frames: Buffer[]): void {
  stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
  stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
  stream.end(Buffer.concat(frames));
}

/** Ends the call at once with a non-OK status (a trailers-only response). */
export function refuse(stream: ServerHttp2Stream, code: number, message = ''): void {
  stream.respond(
    { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(code), 'grpc-message': message },
    { endStream: true },
  );
}

/** A request's fields by number: strings for length-delimited ones, bigints for varints. */
function fields(b: Buffer): Map<number, string | bigint> {
  const out = new Map<number, string | bigint>();
  let at = 0;
  const read = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = b[at++];
      v |= BigInt(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
  };
  while (at < b.length) {
    const key = read();
    if ((key & 7n) === 2n) {
      const n = Number(read());
      out.set(Number(key >> 3n), b.subarray(at, at + n).toString());
      at += n;
    } else out.set(Number(key >> 3n), read());
  }
  return out;
}
