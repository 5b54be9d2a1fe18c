// The dispatcher's two listeners: HTTPS for admission reviews (certificate and key from files, re-read when they
// change, so a rotated Secret needs no restart), plain HTTP for /healthz, /readyz and /metrics. Small timeouts
// and a body limit keep a slow or broken client from holding the webhook. With a client CA, the webhook serves only
// callers whose certificate that CA signed (and, if names are given, whose certificate has one of them): the
// apiserver, when it is configured to present its webhook client certificate; a connection without one fails in
// the TLS handshake.
import { createServer as createHttpServer } from '../engine/net/http.ts';
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Server as HttpsServer } from 'node:https';
import { readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '../shared/kube/logger.ts';
import { handleReview } from './handler.ts';
import type { HandlerDeps } from './handler.ts';

export interface ServerOptions {
  port: number;
  path: string;
  tlsCert: string;
  tlsKey: string;
  /** PEM CA file a caller's client certificate must be signed by (re-read with the certificate); empty: none asked */
  clientCA?: string;
  /** common names a caller's certificate may have; empty: any the client CA signed */
  clientNames?: string[];
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

/** The caller's certificate name when only some names may call, checked after the TLS handshake verified its signer. */
function refusedCaller(req: IncomingMessage, names: readonly string[] | undefined): string | undefined {
  if (!names?.length) return undefined;
  const name = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
  const cn = Array.isArray(name) ? name.join(',') : name;
  return cn && names.includes(cn)
    ? undefined
    : `The client certificate's common name ${JSON.stringify(cn ?? '')} is not one of FERRY_CLIENT_NAMES (${names.join(', ')}).`;
}

async function serveReview(
  req: IncomingMessage,
  res: ServerResponse,
  opts: ServerOptions,
  deps: HandlerDeps,
): Promise<void> {
  const refused = refusedCaller(req, opts.clientNames);
  if (refused) return send(res, 403, `${refused}\n`);
  const path = opts.path;
  const url = new URL(req.url ?? '/', 'https://webhook');
  if (url.pathname !== path)
    return send(res, 404, `Nothing is served at ${url.pathname}; admission reviews go to ${path}.\n`);
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

interface TlsFiles {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
  stamp: string;
}

function tlsFiles(opts: ServerOptions): TlsFiles {
  const files = [opts.tlsCert, opts.tlsKey, ...(opts.clientCA ? [opts.clientCA] : [])];
  try {
    const stamp = files.map((f) => statSync(f).mtimeMs).join(':');
    return {
      cert: readFileSync(opts.tlsCert),
      key: readFileSync(opts.tlsKey),
      ca: opts.clientCA ? readFileSync(opts.clientCA) : undefined,
      stamp,
    };
  } catch (err) {
    throw new Error(
      `Cannot read the webhook certificate ${opts.tlsCert}, its key ${opts.tlsKey}${opts.clientCA ? ` or the client CA ${opts.clientCA}` : ''}: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

function secureContext(tls: TlsFiles): { cert: Buffer; key: Buffer; ca?: Buffer } {
  return tls.ca ? { cert: tls.cert, key: tls.key, ca: tls.ca } : { cert: tls.cert, key: tls.key };
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
  const callers = opts.clientCA ? { requestCert: true, rejectUnauthorized: true } : {};
  const webhook = createHttpsServer(
    { ...secureContext(tls), ...callers, requestTimeout: 10_000, headersTimeout: 5_000, keepAliveTimeout: 30_000 },
    (req, res) => {
      serveReview(req, res, opts, deps).catch((err) => {
        log.error('could not answer a review', { error: err instanceof Error ? err.message : String(err) });
        send(res, 400, 'The review could not be read.\n');
      });
    },
  );
  const certCheck = setInterval(() => {
    try {
      const next = tlsFiles(opts);
      if (next.stamp === tls.stamp) return;
      webhook.setSecureContext(secureContext(next));
      tls = next;
      log.info('loaded a new webhook certificate');
    } catch (err) {
      log.warn('could not reload the webhook certificate; keeping the old one', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }, opts.certCheckMs ?? 60_000);
  certCheck.unref();
  const health = createHttpServer({ requestTimeout: 5_000, headersTimeout: 5_000 }, (req, res) => {
    const path = new URL(req.url ?? '/', 'http://health').pathname;
    if (path === '/healthz') return send(res, 200, 'ok\n');
    if (path === '/readyz')
      return ready ? send(res, 200, 'ready\n') : send(res, 503, 'the webhook is not listening yet\n');
    if (path === '/metrics') {
      deps.metrics.render().then(
        (text) => send(res, 200, text, 'text/plain; version=0.0.4; charset=utf-8'),
        (err: Error) => send(res, 500, `The metrics could not be rendered: ${err.message}\n`),
      );
      return;
    }
    send(res, 404, 'Served here: /healthz, /readyz, /metrics.\n');
  });
  const metricsPort = await listen(health, opts.metricsPort, opts.host);
  const webhookPort = await listen(webhook, opts.port, opts.host);
  ready = true;
  log.info('dispatcher listening', {
    webhookPort,
    path: opts.path,
    metricsPort,
    clientCertificates: opts.clientCA ? `required, signed by ${opts.clientCA}` : 'not asked for',
  });
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
