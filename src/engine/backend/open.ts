// Turns a `--repo` string into a backend, using restic's syntax so the same string works with both tools:
//   /path/to/repo  or  local:/path/to/repo                     local filesystem
//   s3:https://host[:port]/bucket[/prefix]  (or http://)         S3-compatible endpoint
//   s3:host[:port]/bucket[/prefix]                              same, over https
// Every backend comes wrapped in retries.

import { PermanentError } from './backend.ts';
import type { Backend } from './backend.ts';
import { FsBackend } from './fs.ts';
import { RetryBackend } from './retry.ts';
import type { RetryOptions } from './retry.ts';
import type { S3Options } from './s3.ts';
import { DeferredBackend } from './deferred.ts';
import { checkLockPolicy } from './lock-policy.ts';

export interface OpenOptions {
  /** S3 settings the location string cannot carry (credentials, CA file, region, tuning) */
  s3?: Omit<S3Options, 'endpoint' | 'bucket' | 'prefix'>;
  retry?: RetryOptions;
}

export interface S3Location {
  endpoint: string;
  bucket: string;
  prefix: string;
}

/** The location as it may appear in messages: any user:password@ part masked. */
function redact(location: string): string {
  return location.replace(/\/\/[^/@]*@/, '//***@');
}

export function parseS3Location(location: string): S3Location {
  const rest = location.slice('s3:'.length);
  const withScheme = /^https?:\/\//.test(rest) ? rest : `https://${rest.replace(/^\/\//, '')}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new PermanentError(
      `Invalid S3 repository location "${redact(location)}": expected s3:https://host[:port]/bucket[/prefix].`,
    );
  }
  const [bucket = '', ...prefix] = url.pathname.split('/').filter((s) => s !== '');
  if (!bucket) {
    throw new PermanentError(
      `Invalid S3 repository location "${redact(location)}": it names no bucket (s3:https://host[:port]/bucket[/prefix]).`,
    );
  }
  if (url.username || url.password) {
    throw new PermanentError(
      'S3 repository locations must not contain credentials: use AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.',
    );
  }
  return { endpoint: `${url.protocol}//${url.host}`, bucket, prefix: prefix.join('/') };
}

export function openBackend(location: string, opts: OpenOptions = {}): Backend {
  if (location.trim() === '') throw new PermanentError('The repository location is empty.');
  let backend: Backend;
  if (location.startsWith('s3:')) {
    const settings: S3Options = { ...opts.s3, ...parseS3Location(location) };
    if (settings.objectLock) checkLockPolicy(settings.objectLock);
    backend = new DeferredBackend(
      redact(location),
      async () => new (await import('./s3.ts')).S3Backend(settings),
      settings.objectLock,
    );
  } else {
    if (opts.s3?.objectLock || opts.s3?.recoverVersions) {
      throw new PermanentError(
        `${opts.s3.objectLock ? 'objectLock' : 'recoverVersions'} needs an S3 repository (s3:https://host/bucket[/prefix]); ${redact(location)} is a directory.`,
      );
    }
    backend = new FsBackend(location.startsWith('local:') ? location.slice('local:'.length) : location);
  }
  return new RetryBackend(backend, opts.retry);
}
