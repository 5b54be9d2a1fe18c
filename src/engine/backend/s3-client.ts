// Builds the AWS SDK's S3 client: keep-alive connection pools sized for parallel uploads, optional private CA,
// and credentials from the caller or the standard AWS_* variables, else the SDK's provider chain.

import { S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { Agent as HttpAgent } from '../net/http.ts';
import { Agent as HttpsAgent } from 'node:https';
import {
  connectTimeoutMs,
  credentialsFromEnv,
  defaultMaxSockets,
  idleTimeoutMs,
  readCa,
  regionOf,
  type S3ClientOptions,
} from './s3-settings.ts';

export type { S3ClientOptions } from './s3-settings.ts';

export function createS3Client(opts: S3ClientOptions): S3Client {
  const maxSockets = opts.maxSockets ?? defaultMaxSockets;
  const ca = opts.caFile ? readCa(opts.caFile) : undefined;
  const requestHandler = new NodeHttpHandler({
    httpAgent: new HttpAgent({ keepAlive: true, maxSockets }),
    httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets, ca }),
    connectionTimeout: connectTimeoutMs,
    socketTimeout: idleTimeoutMs,
  });
  return new S3Client({
    endpoint: opts.endpoint,
    region: regionOf(opts),
    forcePathStyle: opts.pathStyle ?? true,
    credentials: opts.credentials ?? credentialsFromEnv(),
    requestHandler,
    // retries live in one place, the retry wrapper, so attempts do not multiply
    maxAttempts: 1,
  });
}
