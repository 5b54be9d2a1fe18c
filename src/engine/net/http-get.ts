// HTTP/1.1 GETs whose bodies the kernel reads straight into the buffer the caller gets. Through node:http a body
// arrives as 64 KiB chunks, each a new buffer passed through the parser's callbacks and a stream and then copied
// into the body: about 1 CPU s per GiB of a restore from S3 on the thread that decides its time, where a socket told
// where to read (`onread`) costs a third of that (bench/README.md, 2026-11-30). Only GETs come here; the head of a
// response is parsed here, bounded, and anything this client did not ask for (a longer body than announced, bytes
// after a response, an unknown transfer coding) ends the connection with an error rather than being guessed at.
import { isIP, connect as netConnect, type OnReadOpts, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { BodyReader, HttpGetError, parseHead, headLimit, type Head } from './http-response.ts';

export { HttpGetError };

export interface GetEndpoint {
  protocol: 'http:' | 'https:';
  hostname: string;
  port: number;
  /** trusted CAs for https, in place of Node's */
  ca?: Buffer;
  /** connections open at once; further GETs wait for one */
  maxSockets: number;
  connectTimeoutMs: number;
  /** a connection silent this long during a GET is given up */
  idleTimeoutMs: number;
}

export interface GetResponse {
  status: number;
  /** names in lower case; a header sent more than once has its values joined by ", " */
  headers: Record<string, string>;
  body: Buffer;
}

/** One connection and the GET it is serving, if any. */
interface Connection {
  socket: Socket;
  /** where a response's head is read */
  head: Buffer;
  /** where the next bytes are read: the head's buffer, or the body's once it has a length */
  into: () => Uint8Array;
  onBytes: (n: number) => void;
  onEnd: (err?: Error) => void;
  /** whether a GET was ever answered on it: a reused connection the server closed meanwhile is tried again */
  used: boolean;
}

export class HttpGetter {
  readonly #endpoint: GetEndpoint;
  readonly #idle: Connection[] = [];
  readonly #waiting: (() => void)[] = [];
  #open = 0;
  #closed = false;

  constructor(endpoint: GetEndpoint) {
    this.#endpoint = endpoint;
  }

  /**
   * GETs `path` (with its query) with `headers` (host included by the caller). `maxBody` bounds the body of a
   * partial answer (206, to a ranged GET); an error response's body is kept up to 1 MiB, for its message.
   */
  async get(
    path: string,
    headers: Record<string, string>,
    signal?: AbortSignal,
    maxBody?: number,
  ): Promise<GetResponse> {
    // a line break in a value would end the request early and start another
    for (const [k, v] of [['path', path], ...Object.entries(headers)])
      if (/[\r\n\0]/.test(k) || /[\r\n\0]/.test(v)) throw new TypeError(`a line break or NUL in the GET's ${k}`);
    const request = Buffer.from(
      `GET ${path} HTTP/1.1\r\n${Object.entries(headers)
        .map(([k, v]) => `${k}: ${v}\r\n`)
        .join('')}\r\n`,
      'latin1',
    );
    if (signal?.aborted) throw aborted(signal);
    await this.#slot(signal);
    try {
      for (;;) {
        let reused = this.#idle.pop();
        // one the server is closing (its end came, its close not yet) would take the request and drop it
        while (reused && !reused.socket.writable) {
          reused.socket.destroy();
          reused = this.#idle.pop();
        }
        const conn = reused ?? (await this.#connect(signal));
        try {
          return await this.#exchange(conn, request, signal, maxBody);
        } catch (err) {
          // a connection kept for reuse that the server had closed answers nothing: the GET goes on a new one
          if (reused && err instanceof Unanswered && !signal?.aborted) continue;
          throw err instanceof Unanswered ? err.cause : err;
        }
      }
    } finally {
      this.#release();
    }
  }

  close(): void {
    this.#closed = true;
    for (const conn of this.#idle.splice(0)) conn.socket.destroy();
  }

  async #slot(signal?: AbortSignal): Promise<void> {
    if (this.#open < this.#endpoint.maxSockets) {
      this.#open++;
      return;
    }
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    const wake = (): void => {
      signal?.removeEventListener('abort', abort);
      resolve();
    };
    const abort = (): void => {
      this.#waiting.splice(this.#waiting.indexOf(wake), 1);
      reject(aborted(signal!));
    };
    signal?.addEventListener('abort', abort, { once: true });
    this.#waiting.push(wake);
    await promise;
  }

  /** A slot given back goes to the next waiter, who takes it over (the count of slots taken stays). */
  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#open--;
  }

  #connect(signal?: AbortSignal): Promise<Connection> {
    const { protocol, hostname, port, ca, connectTimeoutMs } = this.#endpoint;
    // the socket asks where to read as soon as it exists, before it is known here
    const conn: Connection = {
      socket: undefined as unknown as Socket,
      head: Buffer.allocUnsafe(headLimit),
      into: () => conn.head,
      onBytes: () => undefined,
      onEnd: () => undefined,
      used: false,
    };
    const onread: OnReadOpts = {
      buffer: () => conn.into(),
      callback: (n) => {
        conn.onBytes(n);
        return true;
      },
    };
    // TLS sockets take onread too (the types do not say so)
    const tls: ConnectionOptions & { onread: OnReadOpts } = { host: hostname, port, ca, onread };
    // a name for SNI, never an address (RFC 6066)
    if (!isIP(hostname)) tls.servername = hostname;
    const socket = protocol === 'https:' ? tlsConnect(tls) : netConnect({ host: hostname, port, onread });
    conn.socket = socket;
    park(conn);
    socket.on('end', () => conn.onEnd());
    socket.on('error', (err) => conn.onEnd(err));
    socket.on('close', () => {
      conn.onEnd(new HttpGetError(`the connection to ${hostname}:${port} closed`, 'ECONNRESET'));
      const i = this.#idle.indexOf(conn);
      if (i >= 0) this.#idle.splice(i, 1);
    });
    return new Promise((resolve, reject) => {
      const fail = (err: Error): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        socket.destroy();
        reject(err);
      };
      const timer = setTimeout(
        () => fail(new HttpGetError(`cannot connect to ${hostname}:${port}`, 'ETIMEDOUT')),
        connectTimeoutMs,
      );
      const abort = (): void => fail(aborted(signal!));
      signal?.addEventListener('abort', abort, { once: true });
      if (signal?.aborted) abort();
      conn.onEnd = (err) => fail(err ?? new HttpGetError(`${hostname}:${port} closed the connection`, 'ECONNRESET'));
      socket.once(protocol === 'https:' ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', abort);
        park(conn);
        resolve(conn);
      });
    });
  }

  /**
   * One GET on `conn`: settles with the response, or fails with Unanswered when the connection was reused and ended
   * (or failed) before a byte of an answer came.
   */
  #exchange(conn: Connection, request: Buffer, signal?: AbortSignal, maxBody?: number): Promise<GetResponse> {
    const { socket, head } = conn;
    const { idleTimeoutMs, hostname, port } = this.#endpoint;
    let headBytes = 0;
    let interim = 0;
    let got = false;
    let settled = false;
    let parsed: Head | undefined;
    let body: BodyReader | undefined;
    return new Promise<GetResponse>((resolve, reject) => {
      const cleanup = (): void => {
        socket.setTimeout(0);
        socket.removeListener('timeout', timeout);
        signal?.removeEventListener('abort', abort);
        park(conn);
      };
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        cleanup();
        socket.destroy();
        // a timeout is not a dropped connection: the server may be slow, and the retry wrapper decides
        const dropped = !got && conn.used && !signal?.aborted && (err as HttpGetError).code !== 'ETIMEDOUT';
        reject(dropped ? new Unanswered(err) : err);
      };
      const timeout = (): void =>
        fail(new HttpGetError(`no answer from ${hostname}:${port} for ${idleTimeoutMs} ms`, 'ETIMEDOUT'));
      const abort = (): void => fail(aborted(signal!));
      /**
       * Bytes past the response, read right after it, would be taken for the next GET's answer on this connection:
       * the GET settles once what arrived with its response is read (libuv reads all a socket holds before the
       * loop's immediates run), and fails if that was more than the response.
       */
      const done = (): void => {
        const res = { status: parsed!.status, headers: parsed!.headers, body: body!.bytes() };
        let ended = false;
        conn.into = () => head;
        conn.onBytes = () => fail(new HttpGetError("bytes came after the end of the server's response", 'EPROTO'));
        conn.onEnd = () => (ended = true);
        setImmediate(() => {
          if (settled) return;
          settled = true;
          cleanup();
          conn.used = true;
          if (body!.reusable && !ended && !socket.destroyed && !this.#closed) {
            socket.unref();
            this.#idle.push(conn);
          } else socket.destroy();
          resolve(res);
        });
      };
      conn.into = () => (body ? body.into() : head.subarray(headBytes));
      conn.onBytes = (n) => {
        got = true;
        try {
          if (body) {
            if (body.add(n)) done();
            return;
          }
          // the head's end may straddle the last read: search from just before it
          let from = Math.max(0, headBytes - 3);
          headBytes += n;
          for (;;) {
            const at = parseHead(head.subarray(0, headBytes), from);
            if (!at) return;
            // an interim answer (100 Continue, 103 Early Hints) comes before the one that counts; a switch of
            // protocols nobody asked for, or interim answers without end, are no answer to a GET
            if (at.head.status < 200) {
              if (at.head.status === 101 || ++interim > 8)
                throw new HttpGetError(`the server answered a GET with ${at.head.status}`, 'EPROTO');
              head.copyWithin(0, at.end, headBytes);
              headBytes -= at.end;
              from = 0;
              continue;
            }
            parsed = at.head;
            // a range's length bounds a partial answer; an error's body is read for its message only
            body = new BodyReader(parsed, parsed.status === 206 ? maxBody : parsed.status < 300 ? undefined : 1 << 20);
            // what came after the head in the same read is the body's start
            if (body.take(head.subarray(at.end, headBytes))) done();
            return;
          }
        } catch (err) {
          fail(err as Error);
        }
      };
      conn.onEnd = (err) => {
        if (body && !err && body.endsAtClose) return done();
        fail(
          err ?? new HttpGetError(`${hostname}:${port} closed the connection before the response ended`, 'ECONNRESET'),
        );
      };
      signal?.addEventListener('abort', abort, { once: true });
      if (signal?.aborted) return abort();
      socket.setTimeout(idleTimeoutMs);
      socket.on('timeout', timeout);
      socket.ref();
      socket.write(request);
    });
  }
}

/** A connection between GETs: whatever arrives on it was not asked for, and ends it. */
function park(conn: Connection): void {
  conn.into = () => conn.head;
  conn.onBytes = () => conn.socket.destroy(new HttpGetError('bytes arrived on a connection with no GET', 'EPROTO'));
  conn.onEnd = () => undefined;
}

/** What node:http rejects an aborted request with, the reason as its cause. */
function aborted(signal: AbortSignal): Error {
  return Object.assign(new Error('The operation was aborted', { cause: signal.reason }), {
    name: 'AbortError',
    code: 'ABORT_ERR',
  });
}

/** A GET on a reused connection that ended before any byte of an answer: safe to send again. */
class Unanswered extends Error {
  constructor(cause: Error) {
    super(cause.message, { cause });
  }
}
