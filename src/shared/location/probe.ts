// Can ferry reach a storage location's bucket with its credentials? One listing under the location's prefix answers
// it, and a failure is named by what failed (host name, connection, TLS, credentials, bucket, permission) with the
// fix, so an operator learns at `ferry location create` or `ferry doctor` what a backup would otherwise fail on.
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { s3Client, type S3ClientOptions } from '../../engine/operations/storage.ts';

/** `secret`: the location's Secrets are missing or incomplete, so nothing was tried */
export type ProbeFailure =
  'secret' | 'dns' | 'connection' | 'tls' | 'credentials' | 'bucket' | 'permission' | 'endpoint';

export interface ProbeTarget extends S3ClientOptions {
  bucket: string;
  prefix?: string;
}

export type ProbeResult =
  | { ok: true; message: string; /** source namespaces with a repository under the prefix */ repositories: string[] }
  | { ok: false; failure: ProbeFailure; message: string; fix: string };

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const dnsCodes = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL']);
const connectionCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ECONNABORTED',
]);
const credentialNames = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'InvalidClientTokenId',
  'InvalidSecurity',
]);

function isTlsError(e: SdkError): boolean {
  const code = e.code ?? '';
  return (
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code === 'EPROTO' ||
    /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)/.test(code)
  );
}

/** What a failed listing means, and what to do about it. */
export function explainProbeError(err: unknown, target: ProbeTarget): Extract<ProbeResult, { ok: false }> {
  const e = (typeof err === 'object' && err !== null ? err : { message: String(err) }) as SdkError;
  const host = URL.canParse(target.endpoint) ? new URL(target.endpoint).host : target.endpoint;
  const status = e.$metadata?.httpStatusCode;
  const detail =
    e.code ??
    (e.name && e.name !== 'Error' ? e.name : undefined) ??
    (status ? `HTTP ${status}` : (e.message ?? 'unknown error'));
  if (dnsCodes.has(e.code ?? '')) {
    return {
      ok: false,
      failure: 'dns',
      message: `The S3 endpoint's host name ${host} does not resolve (${detail}).`,
      fix: 'Check the endpoint URL, or the DNS of the machine running this check.',
    };
  }
  if (e.name === 'AbortError') {
    return {
      ok: false,
      failure: 'connection',
      message: `S3 at ${target.endpoint} did not answer in time.`,
      fix: 'Check that the endpoint is reachable from here and not overloaded.',
    };
  }
  if (connectionCodes.has(e.code ?? '') || e.name === 'TimeoutError') {
    return {
      ok: false,
      failure: 'connection',
      message: `Nothing answers at ${target.endpoint} (${detail}).`,
      fix: 'Check the endpoint URL and port, and that the S3 service is running and reachable (firewall, network policy).',
    };
  }
  if (isTlsError(e)) {
    return {
      ok: false,
      failure: 'tls',
      message: `The TLS certificate of ${target.endpoint} is not accepted (${detail}).`,
      fix: 'Give the CA that signed it (ferry location create --cacert FILE, or spec.s3.caBundle), or check that the host name is in the certificate.',
    };
  }
  if (credentialNames.has(e.name ?? '') || status === 401) {
    return {
      ok: false,
      failure: 'credentials',
      message: `S3 at ${target.endpoint} rejected the credentials (${detail}).`,
      fix: "Put the right access key ID and secret key in the location's credentials Secret.",
    };
  }
  if (e.name === 'NoSuchBucket' || (status === 404 && !e.name)) {
    return {
      ok: false,
      failure: 'bucket',
      message: `Bucket "${target.bucket}" does not exist at ${target.endpoint}.`,
      fix: 'Create the bucket, or correct spec.s3.bucket.',
    };
  }
  if (e.name === 'AccessDenied' || status === 403) {
    return {
      ok: false,
      failure: 'permission',
      message: `The credentials may not list "${target.bucket}/${target.prefix ?? ''}" at ${target.endpoint} (${detail}).`,
      fix: 'Grant s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject on the bucket and prefix to this access key.',
    };
  }
  return {
    ok: false,
    failure: 'endpoint',
    message:
      `S3 at ${target.endpoint} answered the listing of "${target.bucket}" with an error (${detail}): ${e.message ?? ''}`.trim(),
    fix: 'Check that the endpoint is an S3 service and that the region and path style suit it.',
  };
}

/** Lists the first level under the prefix: reachability, credentials and read permission in one request. */
export async function probeLocation(target: ProbeTarget, timeoutMs = 15_000): Promise<ProbeResult> {
  let client;
  try {
    client = await s3Client(target);
  } catch (err) {
    return {
      ok: false,
      failure: 'tls',
      message: (err as Error).message,
      fix: 'Give a readable PEM file with the CA certificate.',
    };
  }
  const prefix = target.prefix ? `${target.prefix.replace(/^\/+|\/+$/g, '')}/` : '';
  try {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: target.bucket, Prefix: prefix, Delimiter: '/', MaxKeys: 1000 }),
      { abortSignal: AbortSignal.timeout(timeoutMs) },
    );
    const repositories = (page.CommonPrefixes ?? [])
      .map((p) => (p.Prefix ?? '').slice(prefix.length).replace(/\/$/, ''))
      .filter((n) => n !== '');
    const where = `${target.endpoint}/${target.bucket}${prefix ? `/${prefix.replace(/\/$/, '')}` : ''}`;
    return {
      ok: true,
      message: `${where} is reachable and listable with these credentials (${repositories.length} repositor${repositories.length === 1 ? 'y' : 'ies'}).`,
      repositories,
    };
  } catch (err) {
    return explainProbeError(err, target);
  } finally {
    client.destroy();
  }
}
