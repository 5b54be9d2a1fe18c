// One server-streaming gRPC call over node:http2, framed by hand (gRPC over HTTP/2: each message a 5-byte prefix,
// a compression flag and a big-endian length, then the protobuf bytes; the outcome in the grpc-status trailer).
// Only what the SnapshotMetadata service needs: TLS with a given CA, no compression, no retries.
import { connect, constants, type ClientHttp2Session, type IncomingHttpHeaders } from 'node:http2';

export interface GrpcTarget {
  /** host:port */
  address: string;
  /** PEM of the CA that signed the server's certificate */
  ca: string | Buffer;
}

/** gRPC's status codes by number, for messages */
const codes = [
  'OK',
  'CANCELLED',
  'UNKNOWN',
  'INVALID_ARGUMENT',
  'DEADLINE_EXCEEDED',
  'NOT_FOUND',
  'ALREADY_EXISTS',
  'PERMISSION_DENIED',
  'RESOURCE_EXHAUSTED',
  'FAILED_PRECONDITION',
  'ABORTED',
  'OUT_OF_RANGE',
  'UNIMPLEMENTED',
  'INTERNAL',
  'UNAVAILABLE',
  'DATA_LOSS',
  'UNAUTHENTICATED',
];

/** A call that ended with a non-OK grpc-status (or never gave one). */
export class GrpcError extends Error {
  readonly code: number;
  constructor(method: string, code: number, message: string) {
    super(`${method}: ${codes[code] ?? `status ${code}`}${message ? `: ${message}` : ''}`);
    this.name = 'GrpcError';
    this.code = code;
  }
}

/** messages bigger than this are refused, as gRPC's default receive limit does */
export const maxMessageBytes = 4 << 20;
const idleMs = 60_000;

/**
 * Calls `method` (`/package.Service/Method`) with one request message and hands each response message to
 * `onMessage` in order. Resolves once the server ends the stream with grpc-status 0; any other end rejects.
 */
export async function serverStream(
  target: GrpcTarget,
  method: string,
  request: Uint8Array,
  onMessage: (message: Uint8Array) => void,
  signal?: AbortSignal,
): Promise<void> {
  signal?.throwIfAborted();
  const session = connect(`https://${target.address}`, { ca: target.ca });
  try {
    await call(session, method, request, onMessage, signal);
  } finally {
    session.close();
  }
}

function call(
  session: ClientHttp2Session,
  method: string,
  request: Uint8Array,
  onMessage: (message: Uint8Array) => void,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const fail = (err: Error): void => {
      stream.close(constants.NGHTTP2_CANCEL);
      reject(err);
    };
    session.on('error', (err) => reject(new Error(`${method}: ${err.message}`)));
    const stream = session.request({
      ':method': 'POST',
      ':path': method,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    // a peer that goes quiet would hold the backup forever; the service streams steadily while it has ranges
    stream.setTimeout(idleMs, () => fail(new Error(`${method}: nothing came for ${idleMs / 1000} s`)));
    const onAbort = (): void => fail(signal!.reason as Error);
    signal?.addEventListener('abort', onAbort, { once: true });
    let headers: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    let pending: Buffer = Buffer.alloc(0);
    stream.on('response', (h) => {
      headers = h;
      // a trailers-only response (an error before any message) carries grpc-status in its headers
      if (h[':status'] !== 200) fail(new Error(`${method}: HTTP status ${h[':status']}, not 200`));
    });
    stream.on('trailers', (t) => {
      trailers = t;
    });
    stream.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      try {
        pending = takeMessages(pending, method, onMessage);
      } catch (err) {
        fail(err as Error);
      }
    });
    stream.on('error', (err) => reject(new Error(`${method}: ${err.message}`)));
    stream.on('close', () => {
      signal?.removeEventListener('abort', onAbort);
      const status = (trailers ?? headers)['grpc-status'];
      if (status === undefined) return reject(new GrpcError(method, 2, 'the stream ended without a grpc-status'));
      const code = Number(status);
      if (code !== 0) return reject(new GrpcError(method, code, grpcMessage((trailers ?? headers)['grpc-message'])));
      if (pending.length > 0)
        return reject(new Error(`${method}: the stream ended inside a message (${pending.length} bytes left over)`));
      resolve();
    });
    stream.end(frame(request));
  });
}

function frame(message: Uint8Array): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** Hands out the whole messages at the front of `buf`; returns what is left of a message still arriving. */
function takeMessages(buf: Buffer, method: string, onMessage: (message: Uint8Array) => void): Buffer {
  let at = 0;
  while (buf.length - at >= 5) {
    const compressed = buf[at];
    const length = buf.readUInt32BE(at + 1);
    if (compressed !== 0)
      throw new Error(`${method}: a compressed message (flag ${compressed}) came, and none was asked for`);
    if (length > maxMessageBytes)
      throw new Error(`${method}: a message of ${length} bytes is past the ${maxMessageBytes}-byte limit`);
    if (buf.length - at - 5 < length) break;
    onMessage(buf.subarray(at + 5, at + 5 + length));
    at += 5 + length;
  }
  return buf.subarray(at);
}

function grpcMessage(raw: string | string[] | undefined): string {
  const text = Array.isArray(raw) ? raw.join(', ') : (raw ?? '');
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
