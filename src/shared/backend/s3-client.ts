// Builds the S3 client: keep-alive connection pools sized for parallel uploads, optional private CA,
// and credentials from the caller or the standard AWS_* variables. Secrets stay inside the client.

import { S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { PermanentError } from './backend.ts';

export interface S3Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface S3ClientOptions {
  /** http(s)://host[:port] */
  endpoint: string;
  /** default: AWS_DEFAULT_REGION, then AWS_REGION, then us-east-1 */
  region?: string;
  /** bucket in the path instead of the host name; default true (MinIO, Ceph and most private stores need it) */
  pathStyle?: boolean;
  /** PEM file with the CA(s) that signed the endpoint's certificate */
  caFile?: string;
  /** default: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN; without them the SDK's provider chain */
  credentials?: S3Credentials;
  /** connections per endpoint; uploads of several packs with several parts each need many */
  maxSockets?: number;
}

const defaultMaxSockets = 32;
const connectTimeoutMs = 10_000;
/** a socket silent this long is dead (a stopped server, a lost route) and its request is retried */
const idleTimeoutMs = 60_000;

export function credentialsFromEnv(env: NodeJS.ProcessEnv = process.env): S3Credentials | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return undefined;
  return { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined };
}

function readCa(caFile: string): Buffer {
  try {
    return readFileSync(caFile);
  } catch (err) {
    throw new PermanentError(`Cannot read the CA file ${caFile}: ${(err as Error).message}.`, { cause: err });
  }
}

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
    region: opts.region || process.env.AWS_DEFAULT_REGION || process.env.AWS_REGION || 'us-east-1',
    forcePathStyle: opts.pathStyle ?? true,
    credentials: opts.credentials ?? credentialsFromEnv(),
    requestHandler,
    // retries live in one place, the retry wrapper, so attempts do not multiply
    maxAttempts: 1,
  });
}
