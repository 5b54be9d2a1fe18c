// What an S3 connection needs, without the AWS SDK: credentials from the caller or the standard AWS_* variables,
// the region, the CA, the connection pool's size and timeouts. Secrets stay inside the clients built from it.
import { readFileSync } from 'node:fs';
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

export const defaultMaxSockets = 32;
export const connectTimeoutMs = 10_000;
/** a socket silent this long is dead (a stopped server, a lost route) and its request is retried */
export const idleTimeoutMs = 60_000;

export function credentialsFromEnv(env: NodeJS.ProcessEnv = process.env): S3Credentials | undefined {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) return undefined;
  return { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined };
}

export function readCa(caFile: string): Buffer {
  try {
    return readFileSync(caFile);
  } catch (err) {
    throw new PermanentError(`Cannot read the CA file ${caFile}: ${(err as Error).message}.`, { cause: err });
  }
}

/** default: AWS_DEFAULT_REGION, then AWS_REGION, then us-east-1 */
export function regionOf(opts: S3ClientOptions): string {
  return opts.region || process.env.AWS_DEFAULT_REGION || process.env.AWS_REGION || 'us-east-1';
}
