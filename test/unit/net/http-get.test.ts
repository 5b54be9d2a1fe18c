// The GET client that reads bodies straight into their buffers, against servers that answer byte by byte as scripted:
// well-formed answers in awkward pieces, kept connections the server drops, and answers HTTP does not allow, each of
// which must fail naming what was wrong and never hand over a body that is not the one sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HttpGetError, HttpGetter, type GetEndpoint } from '../../../src/engine/net/http-get.ts';
import { makeTestCertificates } from '../../support/test-ca.ts';

/** Answers each request (its head as text) on a connection; `n` counts the requests of that connection from 0. */
type Answer = (socket: Socket, request: string, n: number) => void | Promise<void>;

interface Scripted {
  port: number;
  /** connections accepted so far */
  accepted: number;
  /** connections open now, and the most open at once */
  open: number;
  mostOpen: number;
  /** resolves once every connection accepted so far has closed */
  allClosed(): Promise<void>;
  close(): Promise<void>;
}

async function scripted(answer: Answer, tls?: { cert: Buffer; key: Buffer }): Promise<Scripted> {
  const server: Server = tls ? createTlsServer(tls) : createServer();
  const sockets = new Set<Socket>();
  const s: Scripted = {
    port: 0,
    accepted: 0,
    open: 0,
    mostOpen: 0,
    allClosed: async () => {
      while (sockets.size > 0) await sleep(10);
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => server.close(r));
    },
  };
  server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    sockets.add(socket);
    s.accepted++;
    s.mostOpen = Math.max(s.mostOpen, ++s.open);
    socket.on('close', () => {
      sockets.delete(socket);
      s.open--;
    });
    socket.on('error', () => undefined);
    let pending = '';
    let n = 0;
    socket.on('data', (d: Buffer) => {
      pending += d.toString('latin1');
      for (let end = pending.indexOf('\r\n\r\n'); end >= 0; end = pending.indexOf('\r\n\r\n')) {
        const request = pending.slice(0, end);
        pending = pending.slice(end + 4);
        void answer(socket, request, n++);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  s.port = (server.address() as { port: number }).port;
  return s;
}

function getter(port: number, more: Partial<GetEndpoint> = {}): HttpGetter {
  return new HttpGetter({
    protocol: 'http:',
    hostname: '127.0.0.1',
    port,
    maxSockets: 4,
    connectTimeoutMs: 2000,
    idleTimeoutMs: 2000,
    ...more,
  });
}

const host = { host: '127.0.0.1' };
const ok = (body: Buffer | string, extra = ''): Buffer =>
  Buffer.concat([
    Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n`),
    Buffer.from(body),
  ]);

test('a body arrives whole in one buffer, whatever pieces the server sends it in', async () => {
  const body = randomBytes(300_000);
  const head = `HTTP/1.1 206 Partial Content\r\nContent-Length: ${body.length}\r\nContent-Range: bytes 10-${body.length + 9}/999999\r\nX-Twice: a\r\nx-twice: b\r\n\r\n`;
  const whole = Buffer.concat([Buffer.from(head), body]);
  const server = await scripted(async (socket) => {
    // cut inside the status line, inside the head's end, just after it, and through the body
    for (const [from, to] of [
      [0, 5],
      [5, head.length - 2],
      [head.length - 2, head.length + 3],
      [head.length + 3, 70_000],
      [70_000, whole.length],
    ]) {
      socket.write(whole.subarray(from, to));
      await sleep(5);
    }
  });
  const client = getter(server.port);
  try {
    const res = await client.get(
      '/bucket/key',
      { ...host, range: `bytes=10-${body.length + 9}` },
      undefined,
      body.length,
    );
    assert.equal(res.status, 206);
    assert.ok(res.body.equals(body), 'the body differs from the one sent');
    assert.equal(res.headers['content-range'], `bytes 10-${body.length + 9}/999999`);
    assert.equal(res.headers['x-twice'], 'a, b');
  } finally {
    client.close();
    await server.close();
  }
});

test('a connection is kept for the next GET; one the server dropped meanwhile is replaced without failing the GET', async () => {
  let dropNext = false;
  const server = await scripted((socket, _request, n) => {
    // the race every kept connection has: the server closes it just as the next request arrives
    if (n > 0 && dropNext) return void socket.destroy();
    socket.write(ok(`answer ${n}`));
  });
  const client = getter(server.port);
  try {
    assert.equal((await client.get('/a', host)).body.toString(), 'answer 0');
    assert.equal((await client.get('/b', host)).body.toString(), 'answer 1');
    assert.equal(server.accepted, 1, 'the second GET did not reuse the connection');
    dropNext = true;
    assert.equal((await client.get('/c', host)).body.toString(), 'answer 0');
    assert.equal(server.accepted, 2);
  } finally {
    client.close();
    await server.close();
  }
});

test('a chunked error body is read whole, with extensions and trailers, and its connection kept', async () => {
  const xml = '<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>';
  const server = await scripted((socket, _request, n) => {
    if (n === 1) return void socket.write(ok('after'));
    socket.write(
      `HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n10;name=value\r\n${xml.slice(0, 16)}\r\n` +
        `${(xml.length - 16).toString(16)}\r\n${xml.slice(16)}\r\n0\r\nX-Trailer: t\r\n\r\n`,
    );
  });
  const client = getter(server.port);
  try {
    const res = await client.get('/missing', host);
    assert.equal(res.status, 404);
    assert.equal(res.body.toString(), xml);
    assert.equal((await client.get('/next', host)).body.toString(), 'after');
    assert.equal(server.accepted, 1);
  } finally {
    client.close();
    await server.close();
  }
});

test('an interim 100 Continue is passed over; a body without a length ends with its connection, which is not kept', async () => {
  const server = await scripted((socket) => {
    socket.end('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end');
  });
  const client = getter(server.port);
  try {
    const res = await client.get('/x', host);
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), 'until the end');
    await client.get('/y', host);
    assert.equal(server.accepted, 2, 'a connection whose body ended it was kept');
  } finally {
    client.close();
    await server.close();
  }
});

const hostile: { name: string; answer: string | Buffer; error: RegExp; maxBody?: number }[] = [
  { name: 'a status line of another protocol', answer: 'HTTP/2 200\r\n\r\n', error: /status line "HTTP\/2 200"/ },
  { name: 'a status code of two digits', answer: 'HTTP/1.1 20 OK\r\n\r\n', error: /status line/ },
  { name: 'a header line without a colon', answer: 'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', error: /header line/ },
  {
    name: 'a folded header line',
    answer: 'HTTP/1.1 200 OK\r\nx-a: 1\r\n  folded\r\ncontent-length: 0\r\n\r\n',
    error: /header line/,
  },
  {
    name: 'a header name with a space',
    answer: 'HTTP/1.1 200 OK\r\ncontent-length : 0\r\n\r\n',
    error: /header line/,
  },
  {
    name: 'a control character in a value',
    answer: 'HTTP/1.1 200 OK\r\nx-a: a\x01b\r\ncontent-length: 0\r\n\r\n',
    error: /control character in header x-a/,
  },
  {
    name: 'two different lengths',
    answer: 'HTTP/1.1 200 OK\r\ncontent-length: 3\r\ncontent-length: 4\r\n\r\nabcd',
    error: /content-length "3, 4"/,
  },
  {
    name: 'a length in words',
    answer: 'HTTP/1.1 200 OK\r\ncontent-length: ten\r\n\r\n',
    error: /content-length "ten"/,
  },
  { name: 'a negative length', answer: 'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n', error: /content-length "-1"/ },
  {
    name: 'a length past what any buffer holds',
    answer: 'HTTP/1.1 200 OK\r\ncontent-length: 99999999999999999999\r\n\r\n',
    error: /content-length/,
  },
  {
    name: 'a body framed both by chunks and by a length',
    answer: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n',
    error: /both transfer-encoding and content-length/,
  },
  {
    name: 'a switch of protocols',
    answer: 'HTTP/1.1 101 Switching Protocols\r\n\r\n',
    error: /answered a GET with 101/,
  },
  {
    name: 'interim answers without end',
    answer: 'HTTP/1.1 100 Continue\r\n\r\n'.repeat(9),
    error: /answered a GET with 100/,
  },
  {
    name: 'a transfer coding other than chunked',
    answer: 'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip\r\n\r\n',
    error: /transfer coding "gzip"/,
  },
  {
    name: 'a partial answer longer than the range asked for',
    answer: 'HTTP/1.1 206 Partial Content\r\ncontent-length: 11\r\n\r\nhello world',
    error: /11 bytes is longer than the 5 asked for/,
    maxBody: 5,
  },
  {
    name: 'a chunked partial answer longer than the range asked for',
    answer: 'HTTP/1.1 206 Partial Content\r\ntransfer-encoding: chunked\r\n\r\nb\r\nhello world\r\n0\r\n\r\n',
    error: /longer than the 5 asked for/,
    maxBody: 5,
  },
  {
    name: 'a head that never ends',
    answer: `HTTP/1.1 200 OK\r\n${'x-pad: y\r\n'.repeat(7000)}`,
    error: /head is longer than 65536 bytes/,
  },
  {
    name: 'a chunk size that is not hexadecimal',
    answer: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
    error: /chunk size line "zz"/,
  },
  {
    name: 'chunk data longer than its size',
    answer: 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n',
    error: /chunk data longer than its size/,
  },
  {
    name: 'a chunk size line without its end',
    answer: `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1${';'.repeat(5000)}`,
    error: /chunk line longer than 4096/,
  },
  {
    name: 'a second response nobody asked for, in the same read',
    answer: 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n',
    error: /more bytes than its content-length/,
  },
];

for (const h of hostile) {
  test(`refused, naming what is wrong, and the connection closed: ${h.name}`, async () => {
    const server = await scripted((socket) => void socket.write(h.answer));
    const client = getter(server.port);
    try {
      await assert.rejects(client.get('/x', host, undefined, h.maxBody), (err: Error) => {
        assert.ok(err instanceof HttpGetError, `${err.name}: ${err.message}`);
        assert.equal(err.code, 'EPROTO');
        assert.match(err.message, h.error);
        return true;
      });
      await server.allClosed();
    } finally {
      client.close();
      await server.close();
    }
  });
}

test("bytes after a response fail its GET and are never taken for the next one's answer", async () => {
  const server = await scripted(async (socket, _request, n) => {
    if (n > 0 || server.accepted > 1) return void socket.write(ok('real'));
    socket.write('HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n');
    await sleep(20);
    socket.write('helloHTTP/1.1 200 OK\r\ncontent-length: 4\r\n\r\nEVIL');
  });
  const client = getter(server.port);
  try {
    await assert.rejects(client.get('/a', host), (err: HttpGetError) => {
      assert.equal(err.code, 'EPROTO');
      assert.match(err.message, /bytes came after the end of the server's response/);
      return true;
    });
    assert.equal((await client.get('/b', host)).body.toString(), 'real');
    assert.equal(server.accepted, 2, 'the second GET went on the connection the extra bytes came on');
  } finally {
    client.close();
    await server.close();
  }
});

test('a line break in what a GET sends is refused before anything is sent', async () => {
  const client = getter(1);
  await assert.rejects(
    client.get('/x', { ...host, range: 'bytes=0-1\r\nx-evil: 1' }),
    /line break or NUL in the GET's range/,
  );
  await assert.rejects(client.get('/x HTTP/1.1\r\n', host), /line break or NUL in the GET's path/);
});

test('a connection that ends inside the body fails the GET; no short body is handed over', async () => {
  const server = await scripted((socket) => void socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly this'));
  const client = getter(server.port);
  try {
    await assert.rejects(client.get('/x', host), (err: HttpGetError) => {
      assert.equal(err.code, 'ECONNRESET');
      assert.match(err.message, /closed the connection before the response ended/);
      return true;
    });
  } finally {
    client.close();
    await server.close();
  }
});

test('a server that stops answering halfway is given up after the idle timeout', async () => {
  const server = await scripted((socket) => void socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nsome'));
  const client = getter(server.port, { idleTimeoutMs: 300 });
  try {
    const started = Date.now();
    await assert.rejects(client.get('/x', host), (err: HttpGetError) => {
      assert.equal(err.code, 'ETIMEDOUT');
      assert.match(err.message, /no answer from 127\.0\.0\.1:\d+ for 300 ms/);
      return true;
    });
    assert.ok(Date.now() - started < 2000);
    await server.allClosed();
  } finally {
    client.close();
    await server.close();
  }
});

test('an abort stops a GET at once and closes its connection', async () => {
  const server = await scripted((socket) => void socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nsome'));
  const client = getter(server.port);
  try {
    const controller = new AbortController();
    const get = client.get('/x', host, controller.signal);
    await sleep(50);
    const reason = new Error('canceled by the user');
    controller.abort(reason);
    // as node:http rejects: an AbortError whose cause is the reason
    await assert.rejects(get, (err: Error) => err.name === 'AbortError' && err.cause === reason);
    await server.allClosed();
    await assert.rejects(client.get('/y', host, controller.signal), { name: 'AbortError' });
  } finally {
    client.close();
    await server.close();
  }
});

test('a kept connection that goes silent is given up after the idle timeout, not sent the GET again', async () => {
  const server = await scripted((socket, _request, n) => {
    if (n === 0) socket.write(ok('first'));
  });
  const client = getter(server.port, { idleTimeoutMs: 300 });
  try {
    assert.equal((await client.get('/a', host)).body.toString(), 'first');
    await assert.rejects(client.get('/b', host), { code: 'ETIMEDOUT' });
    assert.equal(server.accepted, 1, 'the GET that timed out was sent again on a new connection');
  } finally {
    client.close();
    await server.close();
  }
});

test('no more connections are open at once than maxSockets; the GETs beyond wait their turn', async () => {
  const server = await scripted(async (socket, request) => {
    await sleep(30);
    socket.write(ok(request.split(' ')[1]));
  });
  const client = getter(server.port, { maxSockets: 2 });
  try {
    const paths = Array.from({ length: 7 }, (_, i) => `/k${i}`);
    const bodies = await Promise.all(paths.map(async (p) => (await client.get(p, host)).body.toString()));
    assert.deepEqual(bodies, paths);
    assert.equal(server.mostOpen, 2);
  } finally {
    client.close();
    await server.close();
  }
});

test('over TLS, the server is trusted only through the CA given', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-http-get-'));
  try {
    const certs = await makeTestCertificates(dir);
    const [cert, key, ca] = await Promise.all([certs.certFile, certs.keyFile, certs.caFile].map((f) => readFile(f)));
    const body = randomBytes(200_000);
    const server = await scripted((socket) => void socket.write(ok(body)), { cert, key });
    const trusting = getter(server.port, { protocol: 'https:', ca });
    const plain = getter(server.port, { protocol: 'https:' });
    try {
      assert.ok((await trusting.get('/x', host)).body.equals(body));
      await assert.rejects(plain.get('/x', host), /self-signed|unable to get local issuer|certificate/);
    } finally {
      trusting.close();
      plain.close();
      await server.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
