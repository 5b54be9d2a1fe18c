// Counting the S3 requests a repository cost, from MinIO's own per-bucket Prometheus metrics (v3 API: served live,
// unlike the v2 endpoints that MinIO caches for 10 s). Every run gets a fresh bucket, so its counters are the run's.
// MinIO accepts a bearer JWT (HS512) signed with the root secret key, whose subject is the root access key.
import { createHmac } from 'node:crypto';
import type { Minio } from '../../test/support/minio.ts';

export interface RequestCounts {
  total: number;
  /** per S3 call, e.g. PutObject, GetObject, ListObjectsV2 */
  byName: Record<string, number>;
}

function base64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

export function metricsToken(accessKey: string, secretKey: string, nowSeconds = Math.floor(Date.now() / 1000)): string {
  const header = base64url(JSON.stringify({ alg: 'HS512', typ: 'JWT' }));
  const claims = base64url(JSON.stringify({ exp: nowSeconds + 3600, sub: accessKey, iss: 'prometheus' }));
  const signature = createHmac('sha512', secretKey).update(`${header}.${claims}`).digest();
  return `${header}.${claims}.${base64url(signature)}`;
}

/** Sums the samples of `metric` in a Prometheus text exposition, grouped by their `name` label. */
export function parseRequestCounts(text: string, metric: string): RequestCounts {
  const counts: RequestCounts = { total: 0, byName: {} };
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (!Number.isFinite(value)) continue;
    const name = /[{,]name="([^"]*)"/.exec(line)?.[1] ?? '';
    counts.total += value;
    counts.byName[name] = (counts.byName[name] ?? 0) + value;
  }
  return counts;
}

export async function bucketRequestCounts(minio: Minio, bucket: string): Promise<RequestCounts> {
  const url = `${minio.endpoint}/minio/metrics/v3/bucket/api/${bucket}`;
  const res = await fetch(url, {
    headers: { Authorization: `Bearer ${metricsToken(minio.accessKey, minio.secretKey)}` },
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`MinIO metrics at ${url} answered ${res.status}: ${text.slice(0, 200)}`);
  return parseRequestCounts(text, 'minio_bucket_api_total');
}

/** What happened between two readings of the same counters. */
export function requestsBetween(before: RequestCounts, after: RequestCounts): RequestCounts {
  const byName: Record<string, number> = {};
  for (const [name, n] of Object.entries(after.byName)) {
    const d = n - (before.byName[name] ?? 0);
    if (d > 0) byName[name] = d;
  }
  return { total: after.total - before.total, byName };
}
