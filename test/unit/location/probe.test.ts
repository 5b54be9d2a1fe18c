// The storage location check names what failed: each failure is produced for real (a closed port, a name that does
// not resolve, an untrusted certificate, an S3 server answering each error code) rather than simulated in the client.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { probeLocation, type ProbeResult, type ProbeTarget } from '../../../src/shared/location/probe.ts';
import { makeTestCertificates } from '../../support/test-ca.ts';

const credentials = { accessKeyId: 'id', secretAccessKey: 'secret-key' };

/** What the fake S3 answers to a listing: an error code with its status, or the prefixes found. */
let answer: { status: number; code: string } | { prefixes: string[] } = { prefixes: [] };
let lastUrl = '';

function s3(req: IncomingMessage, res: ServerResponse): void {
  lastUrl = req.url ?? '';
  if ('code' in answer) {
    res.writeHead(answer.status, { 'Content-Type': 'application/xml' });
    res.end(
      `<?xml version="1.0" encoding="UTF-8"?><Error><Code>${answer.code}</Code><Message>${answer.code} from the test</Message></Error>`,
    );
    return;
  }
  const prefixes = answer.prefixes.map((p) => `<CommonPrefixes><Prefix>${p}</Prefix></CommonPrefixes>`).join('');
  res.writeHead(200, { 'Content-Type': 'application/xml' });
  res.end(
    `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>backups/</Prefix><KeyCount>0</KeyCount><MaxKeys>1000</MaxKeys><Delimiter>/</Delimiter><IsTruncated>false</IsTruncated>${prefixes}</ListBucketResult>`,
  );
}

function failure(r: ProbeResult): string {
  return r.ok ? 'ok' : r.failure;
}

describe('storage location check', () => {
  const http = createServer(s3);
  let tls: ReturnType<typeof createTlsServer>;
  let dir: string;
  let caFile: string;
  let target: ProbeTarget;
  let tlsEndpoint: string;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-probe-'));
    const certs = await makeTestCertificates(dir);
    caFile = certs.caFile;
    tls = createTlsServer({ cert: await readFile(certs.certFile), key: await readFile(certs.keyFile) }, s3);
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    target = {
      endpoint: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
      bucket: 'b',
      prefix: 'backups',
      credentials,
    };
    tlsEndpoint = `https://127.0.0.1:${(tls.address() as AddressInfo).port}`;
  });
  after(async () => {
    http.close();
    tls.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the repositories under the prefix when all is well', async () => {
    answer = { prefixes: ['backups/app-1/', 'backups/app-2/'] };
    const r = await probeLocation(target);
    assert.ok(r.ok, r.message);
    assert.deepEqual(r.repositories, ['app-1', 'app-2']);
    assert.match(lastUrl, /^\/b\/?\?/);
    assert.match(decodeURIComponent(lastUrl), /prefix=backups\//);
  });

  const answers: [code: string, status: number, failure: string, text: RegExp][] = [
    ['InvalidAccessKeyId', 403, 'credentials', /rejected the credentials \(InvalidAccessKeyId\)/],
    ['SignatureDoesNotMatch', 403, 'credentials', /rejected the credentials/],
    ['AccessDenied', 403, 'permission', /may not list "b\/backups"/],
    ['NoSuchBucket', 404, 'bucket', /Bucket "b" does not exist/],
    ['InternalError', 500, 'endpoint', /answered the listing of "b" with an error/],
  ];
  for (const [code, status, expected, text] of answers) {
    it(`names ${expected} for ${code}`, async () => {
      answer = { status, code };
      const r = await probeLocation(target);
      assert.equal(failure(r), expected);
      assert.match(r.message, text);
      assert.ok(!r.ok && r.fix.length > 0);
      assert.ok(!r.message.includes('secret-key'), 'the secret never shows');
    });
  }

  it('names the connection when nothing listens', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const r = await probeLocation({ ...target, endpoint: `http://127.0.0.1:${port}` });
    assert.equal(failure(r), 'connection', r.message);
    assert.match(r.message, /ECONNREFUSED/);
  });

  it('names DNS when the host does not resolve', async () => {
    const r = await probeLocation({ ...target, endpoint: 'http://no-such-host.invalid:9000' });
    assert.equal(failure(r), 'dns', r.message);
    assert.match(r.message, /no-such-host\.invalid:9000 does not resolve/);
  });

  it('names TLS when the certificate is not trusted, and passes with its CA', async () => {
    answer = { prefixes: [] };
    const untrusted = await probeLocation({ ...target, endpoint: tlsEndpoint });
    assert.equal(failure(untrusted), 'tls', untrusted.message);
    assert.match(untrusted.message, /TLS certificate of https:\/\/127\.0\.0\.1:\d+ is not accepted/);
    const trusted = await probeLocation({ ...target, endpoint: tlsEndpoint, caFile });
    assert.ok(trusted.ok, trusted.message);
  });
});
