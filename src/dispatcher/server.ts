// The dispatcher's two listeners: HTTPS for admission reviews (certificate and key from files, re-read when they
// change, so a rotated Secret needs no restart), plain HTTP for /healthz, /readyz and /metrics. Small timeouts
// and a body limit keep a slow or broken client from holding the webhook.
import { createServer as createHttpServer } from '../shared/net/http.ts';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import { readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../shared/kube/logger.ts';
import { handleReview } from './handler.ts';
import type { HandlerDeps } from './handler.ts';

export interface ServerOptions {
  port: number;
  path: string;
  tlsCert: string;
  tlsKey: string;
  metricsPort: number;
  /** how often to look for a new certificate */
  certCheckMs?: number;
  /** bind address; all interfaces by default */
  host?: string;
}

export interface RunningServers {
  webhookPort: number;
  metricsPort: number;
  close(): Promise<void>;
}

/** Reviews are a few KiB; this leaves room for an object and its old version at the largest size etcd stores. */
const maxBodyBytes = 3 * 1024 * 1024;

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBodyBytes) {
        resolve(undefined);
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

async function serveReview(req: IncomingMessage, res: ServerResponse, path: string, deps: HandlerDeps): Promise<void> {
  const url = new URL(req.url ?? '/', 'https://webhook');
  if (url.pathname !== path) return send(res, 404, `Nothing is served at ${url.pathname}; admission reviews go to ${path}.\n`);
  if (req.method !== 'POST') return send(res, 405, 'Admission reviews are POSTed.\n');
  const body = await readBody(req);
  if (!body) return send(res, 413, `The review is larger than ${maxBodyBytes} bytes.\n`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return send(res, 400, 'The body is not JSON.\n');
  }
  const result = await handleReview(parsed, deps);
  if (result.status === 400) return send(res, 400, `${result.error}.\n`);
  send(res, 200, JSON.stringify(result.review), 'application/json');
}

function tlsFiles(opts: ServerOptions): { cert: Buffer; key: Buffer; stamp: string } {
  try {
    const stamp = [opts.tlsCert, opts.tlsKey].map((f) => statSync(f).mtimeMs).join(':');
    return { cert: readFileSync(opts.tlsCert), key: readFileSync(opts.tlsKey), stamp };
  } catch (err) {
    throw new Error(`Cannot read the webhook certificate ${opts.tlsCert} and key ${opts.tlsKey}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function listen(server: HttpServer | HttpsServer, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: HttpServer | HttpsServer): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function startServers(opts: ServerOptions, deps: HandlerDeps, log: Logger): Promise<RunningServers> {
  let tls = tlsFiles(opts);
  let ready = false;
  const webhook = createHttpsServer({ cert: tls.cert, key: tls.key, requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 30_000 }, (req, res) => {
    serveReview(req, res, opts.path, deps).catch((err) => {
      log.error('could not answer a review', { error: err instanceof Error ? err.message : String(err) });
      send(res, 400, 'The review could not be read.\n');
    });
  });
  const certCheck = setInterval(() => {
    try {
      const next = tlsFiles(opts);
      if (next.stamp === tls.stamp) return;
      webhook.setSecureContext({ cert: next.cert, key: next.key });
      tls = next;
      log.info('loaded a new webhook certificate');
    } catch (err) {
      log.warn('could not reload the webhook certificate; keeping the old one', { error: err instanceof Error ? err.message : String(err) });
    }
  }, opts.certCheckMs ?? 60_000);
  certCheck.unref();
  const health = createHttpServer({ requestTimeout: 5_000, headersTimeout: 5_000 }, (req, res) => {
    const path = new URL(req.url ?? '/', 'http://health').pathname;
    if (path === '/healthz') return send(res, 200, 'ok\n');
    if (path === '/readyz') return ready ? send(res, 200, 'ready\n') : send(res, 503, 'the webhook is not listening yet\n');
    if (path === '/metrics') {
      deps.metrics.render().then((text) => send(res, 200, text, 'text/plain; version=0.0.4; charset=utf-8'), (err: Error) => send(res, 500, `The metrics could not be rendered: ${err.message}\n`));
      return;
    }
    send(res, 404, 'Served here: /healthz, /readyz, /metrics.\n');
  });
  const metricsPort = await listen(health, opts.metricsPort, opts.host);
  const webhookPort = await listen(webhook, opts.port, opts.host);
  ready = true;
  log.info('dispatcher listening', { webhookPort, path: opts.path, metricsPort });
  return {
    webhookPort,
    metricsPort,
    async close() {
      ready = false;
      clearInterval(certCheck);
      await Promise.all([closeServer(webhook), closeServer(health)]);
    },
  };
}
