// The dispatcher's listeners over real sockets: reviews over HTTPS (with a certificate from a throwaway CA, reloaded
// when the files change), health and metrics over HTTP, clear 4xx answers for anything that is not a review, and
// with a client CA only callers presenting a certificate it signed (with an allowed name) are served.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { startServers } from '../../../src/dispatcher/server.ts';
import type { RunningServers } from '../../../src/dispatcher/server.ts';
import { makeClientCertificate, makeTestCertificates } from '../../support/test-ca.ts';
import type { TestCertificates } from '../../support/test-ca.ts';
import { review, upload, world } from './world.ts';

interface Answer {
  status: number;
  body: string;
}

function post(
  port: number,
  ca: string,
  path: string,
  body: string,
  client?: { cert: string; key: string },
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path, method: 'POST', ca, ...client, headers: { 'Content-Type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function get(port: number, path: string): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.text() };
}

function serial(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
      resolve(socket.getPeerCertificate().serialNumber);
      socket.end();
    });
    socket.on('error', reject);
  });
}

describe('the dispatcher servers', () => {
  let dir: string;
  let certs: TestCertificates;
  let ca: string;
  let servers: RunningServers;
  const w = world();

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-dispatcher-'));
    certs = await makeTestCertificates(dir);
    ca = await readFile(certs.caFile, 'utf8');
    servers = await startServers(
      {
        port: 0,
        metricsPort: 0,
        path: '/validate',
        tlsCert: certs.certFile,
        tlsKey: certs.keyFile,
        certCheckMs: 100,
        host: '127.0.0.1',
      },
      w.handler,
      w.handler.log,
    );
  });

  after(async () => {
    await servers.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** A creation reviewed over HTTPS, then stored as the apiserver would after an allowed answer. */
  async function created(name: string): Promise<Answer> {
    const obj = upload(name);
    const answer = await post(servers.webhookPort, ca, '/validate', JSON.stringify(review('CREATE', obj)));
    w.kube.seed(obj);
    await w.settle();
    return answer;
  }

  it('answers an admission review over HTTPS', async () => {
    const answer = await created('served');
    assert.equal(answer.status, 200);
    const parsed = JSON.parse(answer.body);
    assert.equal(parsed.kind, 'AdmissionReview');
    assert.equal(parsed.response.allowed, true);
  });

  it('answers 4xx, never 5xx, to what is not a review', async () => {
    assert.equal((await post(servers.webhookPort, ca, '/validate', '{not json')).status, 400);
    assert.equal((await post(servers.webhookPort, ca, '/validate', '{"kind":"Pod"}')).status, 400);
    assert.equal((await post(servers.webhookPort, ca, '/elsewhere', '{}')).status, 404);
    // an oversized body is cut off: the client sees 413, or a closed connection if it was still sending
    const big = await post(servers.webhookPort, ca, '/validate', 'x'.repeat(4 * 1024 * 1024)).catch(
      (err: Error) => err,
    );
    if (!(big instanceof Error)) assert.equal(big.status, 413);
    assert.equal((await created('after')).status, 200);
  });

  it('serves health, readiness and metrics on the plain port', async () => {
    assert.deepEqual(await get(servers.metricsPort, '/healthz'), { status: 200, body: 'ok\n' });
    assert.deepEqual(await get(servers.metricsPort, '/readyz'), { status: 200, body: 'ready\n' });
    const metrics = await get(servers.metricsPort, '/metrics');
    assert.match(
      metrics.body,
      /^ferry_dispatcher_admissions_total\{kind="DataUpload",operation="CREATE",result="allowed"\} [1-9]/m,
    );
    assert.match(
      metrics.body,
      /^ferry_dispatcher_dispatches_total\{kind="DataUpload",step="snapshot",result="created"\} 2$/m,
    );
    assert.match(metrics.body, /^ferry_dispatcher_admission_duration_seconds_count\{kind="DataUpload"\} [1-9]/m);
    assert.equal((await get(servers.metricsPort, '/other')).status, 404);
  });

  it('picks up a new certificate without a restart', async () => {
    const first = await serial(servers.webhookPort, ca);
    const next = await makeTestCertificates(dir, 'next.crt', 'next.key');
    // the new pair is signed by a new CA written over the old one: trust it to see the switch
    await copyFile(next.certFile, certs.certFile);
    await copyFile(next.keyFile, certs.keyFile);
    const newCa = await readFile(next.caFile, 'utf8');
    let seen = '';
    for (let i = 0; i < 50 && !seen; i++) {
      await new Promise((r) => setTimeout(r, 100));
      seen = await serial(servers.webhookPort, newCa).catch(() => '');
    }
    assert.ok(seen && seen !== first, 'the server kept its old certificate');
  });
});

describe('the webhook with a client CA', () => {
  let dir: string;
  let ca: string;
  let servers: RunningServers;
  let named: RunningServers;
  const clients: Record<string, { cert: string; key: string }> = {};
  const w = world();
  const body = JSON.stringify(review('CREATE', upload('called'), { dryRun: true }));

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-dispatcher-clients-'));
    const certs = await makeTestCertificates(dir);
    ca = await readFile(certs.caFile, 'utf8');
    // the apiserver's client certificate comes from a CA of its own; a stranger's from another
    const trusted = join(dir, 'clients');
    const stranger = join(dir, 'stranger');
    await Promise.all([mkdir(trusted), mkdir(stranger)]);
    await Promise.all([makeTestCertificates(trusted), makeTestCertificates(stranger)]);
    for (const [name, caDir, cn] of [
      ['apiserver', trusted, 'kube-apiserver-webhook-client'],
      ['other', trusted, 'someone-else'],
      ['stranger', stranger, 'kube-apiserver-webhook-client'],
    ] as const) {
      const pair = await makeClientCertificate(caDir, dir, name, cn);
      clients[name] = { cert: await readFile(pair.certFile, 'utf8'), key: await readFile(pair.keyFile, 'utf8') };
    }
    const opts = {
      port: 0,
      metricsPort: 0,
      path: '/validate',
      tlsCert: certs.certFile,
      tlsKey: certs.keyFile,
      clientCA: join(trusted, 'ca.crt'),
      host: '127.0.0.1',
    };
    servers = await startServers(opts, w.handler, w.handler.log);
    named = await startServers({ ...opts, clientNames: ['kube-apiserver-webhook-client'] }, w.handler, w.handler.log);
  });

  after(async () => {
    await Promise.all([servers.close(), named.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  it('serves a caller whose certificate the client CA signed', async () => {
    const answer = await post(servers.webhookPort, ca, '/validate', body, clients.apiserver);
    assert.equal(answer.status, 200);
    assert.equal(JSON.parse(answer.body).response.allowed, true);
    assert.equal(
      (await post(servers.webhookPort, ca, '/validate', body, clients.other)).status,
      200,
      'without names, any certificate the CA signed',
    );
  });

  it('refuses in the TLS handshake a caller without a certificate, or with one another CA signed', async () => {
    await assert.rejects(post(servers.webhookPort, ca, '/validate', body), /certificate|socket hang up|ECONNRESET/i);
    await assert.rejects(
      post(servers.webhookPort, ca, '/validate', body, clients.stranger),
      /certificate|socket hang up|ECONNRESET|unknown ca/i,
    );
  });

  it('with names, refuses a certificate of another name with 403 saying which', async () => {
    assert.equal((await post(named.webhookPort, ca, '/validate', body, clients.apiserver)).status, 200);
    const refused = await post(named.webhookPort, ca, '/validate', body, clients.other);
    assert.equal(refused.status, 403);
    assert.match(
      refused.body,
      /common name "someone-else" is not one of FERRY_CLIENT_NAMES \(kube-apiserver-webhook-client\)/,
    );
  });
});
