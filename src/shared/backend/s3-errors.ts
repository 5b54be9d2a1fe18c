// Turns S3 SDK failures into the backend's error classes: missing objects, permanent refusals (missing bucket,
// bad credentials, malformed requests), and everything else left as is for the retry wrapper (5xx, throttling,
// network errors).

import { PermanentError } from './backend.ts';
import type { Handle } from './backend.ts';
import { NotExistError } from './errors.ts';

interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

export interface S3Target {
  location: string;
  endpoint: string;
  bucket: string;
}

const credentialErrors = new Set([
  'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'Forbidden', 'InvalidToken', 'ExpiredToken',
  'InvalidClientTokenId',
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
  if (name === 'NoSuchBucket' || (!h && status === 404)) {
    return new PermanentError(`Bucket "${target.bucket}" does not exist at ${target.endpoint}.`, { cause: err });
  }
  if (credentialErrors.has(name) || status === 403 || status === 401) {
    return new PermanentError(
      `S3 at ${target.endpoint} refused access to bucket "${target.bucket}" (${name || `HTTP ${status}`}): check the credentials and their permissions.`,
      { cause: err },
    );
  }
  if (name === 'CredentialsProviderError') {
    return new PermanentError('No S3 credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or pass credentials.', { cause: err });
  }
  if (h && (name === 'NoSuchKey' || name === 'NotFound' || status === 404)) {
    return new NotExistError(target.location, h, { cause: err });
  }
  if (status !== undefined && status >= 400 && status < 500 && !transientClientStatus.has(status)) {
    return new PermanentError(`S3 at ${target.endpoint} rejected a request: ${name || `HTTP ${status}`}: ${e.message ?? ''}`.trim(), { cause: err });
  }
  return err;
}
