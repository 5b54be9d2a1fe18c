// A loopback HTTP proxy in front of an S3 endpoint that counts the request body bytes the endpoint receives, by
// method: what a copy or backup really sends over the network, measured outside the process that sends it.
// Requests pass through untouched (Host header included), so SigV4 signatures made for the proxy's address stay valid.
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CountingProxy {
  /** http://127.0.0.1:PORT, to use instead of the endpoint */
  endpoint: string;
  /** body bytes of the requests with this method (PUT, POST) since the last reset */
  received(method: string): number;
  reset(): void;
  close(): Promise<void>;
}

export async function countingProxy(target: string): Promise<CountingProxy> {
  const to = new URL(target);
  let counts = new Map<string, number>();
  const server = createServer((req, res) => {
    const out = request(
      { hostname: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', () => res.destroy());
    req.on('data', (chunk: Buffer) => {
      const method = req.method ?? '';
      counts.set(method, (counts.get(method) ?? 0) + chunk.length);
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    received: (method) => counts.get(method) ?? 0,
    reset() {
      counts = new Map();
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
