// Turns S3 SDK failures into the backend's error classes: missing objects, permanent refusals (missing bucket,
// bad credentials, malformed requests), and everything else left as is for the retry wrapper (5xx, throttling,
// network errors).

import { PermanentError } from './backend.ts';
import type { Handle } from './backend.ts';
import { NotExistError } from './errors.ts';

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

export interface S3Target {
  location: string;
  endpoint: string;
  bucket: string;
}

const credentialErrors = new Set([
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'Forbidden',
  'InvalidToken',
  'ExpiredToken',
  'InvalidClientTokenId',
]);
/** certificate checks that fail the same way on every attempt */
const tlsTrustErrors = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);
/** 4xx answers that mean "later", not "never" */
const transientClientStatus = new Set([408, 409, 423, 429]);

function statusOf(err: SdkError): number | undefined {
  return err.$metadata?.httpStatusCode;
}

/** `h` is the object the request was about; undefined for bucket-level requests. */
export function classifyS3Error(err: unknown, target: S3Target, h?: Handle): unknown {
  if (typeof err !== 'object' || err === null) return err;
  const e = err as SdkError;
  const status = statusOf(e);
  const name = e.name ?? '';
  // answers without a body (HEAD requests) carry no error code; the status is then the best description
  const what = name && name !== 'Unknown' ? name : `HTTP ${status}`;
  if (tlsTrustErrors.has(e.code ?? '')) {
    return new PermanentError(
      `The TLS certificate of ${target.endpoint} is not trusted (${e.code}): pass the CA file that signed it.`,
      { cause: err },
    );
  }
  if (name === 'NoSuchBucket' || (!h && status === 404)) {
    return new PermanentError(`Bucket "${target.bucket}" does not exist at ${target.endpoint}.`, { cause: err });
  }
  if (credentialErrors.has(name) || status === 403 || status === 401) {
    return new PermanentError(
      `S3 at ${target.endpoint} refused access to bucket "${target.bucket}" (${what}): check the credentials and their permissions.`,
      { cause: err },
    );
  }
  if (name === 'CredentialsProviderError') {
    return new PermanentError(
      'No S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or pass credentials.',
      { cause: err },
    );
  }
  if (h && (name === 'XAmzContentSHA256Mismatch' || name === 'BadDigest')) {
    return new PermanentError(
      `S3 at ${target.endpoint} refused ${h.type} ${h.name}: the bytes it received do not hash to the file's name (${name}); they changed after they were hashed, in memory or on the way, and nothing was stored.`,
      { cause: err },
    );
  }
  if (h && (name === 'NoSuchKey' || name === 'NotFound' || status === 404)) {
    return new NotExistError(target.location, h, { cause: err });
  }
  if (status !== undefined && status >= 400 && status < 500 && !transientClientStatus.has(status)) {
    return new PermanentError(`S3 at ${target.endpoint} rejected a request (${what}): ${e.message ?? ''}`.trim(), {
      cause: err,
    });
  }
  return err;
}
