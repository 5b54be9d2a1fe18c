// A throwaway certificate authority and a server certificate for 127.0.0.1, made with openssl, so tests can run
// TLS endpoints that clients trust only through an explicit CA file.

import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TestCertificates {
  /** PEM of the CA: what a client passes as its CA file */
  caFile: string;
  certFile: string;
  keyFile: string;
}

const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** Writes ca.crt, ca.key, `certName` and `keyName` into `dir`; the certificate also names `dnsNames` (a Service's). */
export async function makeTestCertificates(
  dir: string,
  certName = 'server.crt',
  keyName = 'server.key',
  dnsNames: string[] = [],
): Promise<TestCertificates> {
  const path = (name: string): string => join(dir, name);
  await run('openssl', [
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=ferry test CA',
  ]);
  await run('openssl', [
    'req',
    ...ecKey,
    '-keyout',
    path(keyName),
    '-out',
    path('server.csr'),
    '-subj',
    '/CN=127.0.0.1',
  ]);
  await writeFile(
    path('san.ext'),
    `subjectAltName=${['IP:127.0.0.1', 'DNS:localhost', ...dnsNames.map((n) => `DNS:${n}`)].join(',')}\n`,
  );
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    path('server.csr'),
    '-CA',
    path('ca.crt'),
    '-CAkey',
    path('ca.key'),
    '-CAcreateserial',
    '-out',
    path(certName),
    '-days',
    '2',
    '-extfile',
    path('san.ext'),
  ]);
  return { caFile: path('ca.crt'), certFile: path(certName), keyFile: path(keyName) };
}

/**
 * Writes `<name>.crt` and `<name>.key` into `dir`: a client certificate (clientAuth) with common name `cn`, signed by
 * the CA that makeTestCertificates wrote into `caDir`.
 */
export async function makeClientCertificate(
  caDir: string,
  dir: string,
  name: string,
  cn: string,
): Promise<{ certFile: string; keyFile: string }> {
  const path = (file: string): string => join(dir, file);
  await run('openssl', [
    'req',
    ...ecKey,
    '-keyout',
    path(`${name}.key`),
    '-out',
    path(`${name}.csr`),
    '-subj',
    `/CN=${cn}`,
  ]);
  await writeFile(path(`${name}.ext`), 'extendedKeyUsage=clientAuth\n');
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    path(`${name}.csr`),
    '-CA',
    join(caDir, 'ca.crt'),
    '-CAkey',
    join(caDir, 'ca.key'),
    '-CAcreateserial',
    '-out',
    path(`${name}.crt`),
    '-days',
    '2',
    '-extfile',
    path(`${name}.ext`),
  ]);
  return { certFile: path(`${name}.crt`), keyFile: path(`${name}.key`) };
}
