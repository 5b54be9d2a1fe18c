// The folders directly under a location (S3: the common prefixes one level below it, listed with delimiter "/";
// filesystem: its sub-directories). A storage location keeps one repository per folder, so this is how the
// repositories it holds are found from the bucket itself rather than from what the cluster still remembers.
import { readdir } from 'node:fs/promises';
import { parseS3Location } from './open.ts';
import type { OpenOptions } from './open.ts';

/** Names of the folders directly under `location` (sorted); a location that does not exist yet has none. */
export async function listFolders(location: string, opts: OpenOptions = {}, signal?: AbortSignal): Promise<string[]> {
  const names = location.startsWith('s3:')
    ? await s3Folders(location, opts, signal)
    : await fsFolders(location.replace(/^local:/, ''));
  return names.sort();
}

async function fsFolders(path: string): Promise<string[]> {
  try {
    return (await readdir(path, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

async function s3Folders(location: string, opts: OpenOptions, signal?: AbortSignal): Promise<string[]> {
  // loaded only for S3, as the S3 backend is (./open.ts)
  const [{ ListObjectsV2Command }, { createS3Client }, { classifyS3Error }] = await Promise.all([
    import('@aws-sdk/client-s3'),
    import('./s3-client.ts'),
    import('./s3-errors.ts'),
  ]);
  const { endpoint, bucket, prefix } = parseS3Location(location);
  const client = createS3Client({ ...opts.s3, endpoint });
  const under = prefix ? `${prefix}/` : '';
  const names: string[] = [];
  try {
    let token: string | undefined;
    do {
      const page = await client.send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: under, Delimiter: '/', ContinuationToken: token }),
        { abortSignal: signal },
      );
      for (const p of page.CommonPrefixes ?? []) {
        const name = (p.Prefix ?? '').slice(under.length).replace(/\/$/, '');
        if (name) names.push(name);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  } catch (err) {
    throw classifyS3Error(err, { location, endpoint, bucket });
  } finally {
    client.destroy();
  }
  return names;
}
