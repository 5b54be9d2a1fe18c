// Reaching a repository's storage before any repository is opened: the backend a location string names (restic's
// syntax), the folders under a bucket prefix (where maintenance finds the repositories of a storage location), and
// an S3 client to probe a bucket with. The S3 modules load only when an S3 location is used.
import type { S3Client } from '@aws-sdk/client-s3';
import type { S3ClientOptions } from '../backend/s3-client.ts';

export type { Backend, ObjectLockPolicy } from '../backend/backend.ts';
export { listFolders } from '../backend/folders.ts';
export { openBackend, type OpenOptions } from '../backend/open.ts';
export type { S3ClientOptions };

/** The engine's S3 client (its connection pools, CA and credentials) for one request outside a repository. */
export async function s3Client(opts: S3ClientOptions): Promise<S3Client> {
  return (await import('../backend/s3-client.ts')).createS3Client(opts);
}
