// What to fix when `location create` cannot reach the bucket, said in the flags just typed rather than in the
// fields of the Secret and spec they become (which is how `ferry doctor`, reading a stored location, says it).
import type { ProbeFailure } from '../../shared/location/probe.ts';

const fixes: Partial<Record<ProbeFailure, string>> = {
  dns: 'Check the host name in --endpoint, or the DNS of this machine.',
  connection: 'Check --endpoint (host and port), and that the S3 service runs and is reachable from here.',
  tls: 'Give the CA that signed its certificate with --cacert FILE, or check the host name in --endpoint.',
  credentials:
    'Put the right access key ID and secret key in --access-key and --secret-key-file (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the Secret named by --credential-secret).',
  bucket: 'Create the bucket, or correct --bucket.',
  permission:
    'Grant s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject on --bucket and --prefix to the access key of --access-key.',
  endpoint: 'Check that --endpoint is an S3 service and that --region and --path-style suit it.',
};

export function fixInFlags(failure: ProbeFailure, fix: string): string {
  return fixes[failure] ?? fix;
}
