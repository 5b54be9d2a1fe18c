// Which repository a resource uses, and its password: one repository per (storage location, source namespace),
// each with its own password derived from the location's secret, so tenants never share keys or deduplicate
// against each other. Its master key and chunker polynomial are derived the same way, so that concurrent first
// backups create identical repositories. Pure functions: the steps read the location and its Secrets, then call these.
import { createHmac } from 'node:crypto';
import type { BackupStorageLocationSpec } from '../api/types.ts';
import { derivePolynomial, type MasterKey, type Polynomial } from '../../engine/operations/identity.ts';

const passwordContext = 'ferry.dev/repository/';

/** `s3:<endpoint>/<bucket>/<prefix>/<namespace>` (no prefix: `s3:<endpoint>/<bucket>/<namespace>`). */
export function repositoryLocation(spec: BackupStorageLocationSpec, namespace: string): string {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace))
    throw new Error(`"${namespace}" is not a namespace name, so it cannot name a repository`);
  const endpoint = spec.s3.endpoint.replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]+$/.test(endpoint))
    throw new Error(`the storage location's endpoint "${spec.s3.endpoint}" must be http(s)://host[:port]`);
  const parts = [spec.s3.bucket, ...(spec.s3.prefix ?? '').split('/'), namespace].filter((p) => p !== '');
  return `s3:${endpoint}/${parts.join('/')}`;
}

/** hex(HMAC-SHA256(key = the location's password secret, message = "ferry.dev/repository/" + namespace)). */
export function repositoryPassword(locationSecret: string | Uint8Array, namespace: string): string {
  if (locationSecret.length === 0) throw new Error("the storage location's repository password secret is empty");
  return createHmac('sha256', locationSecret)
    .update(passwordContext + namespace)
    .digest('hex');
}

export interface RepositoryIdentity {
  masterKey: MasterKey;
  polynomial: Polynomial;
  id: string;
}

/**
 * The master key, chunker polynomial and id a namespace's repository is created with, derived from the location's
 * secret like its password (each under its own HMAC context). Transfers that race to create the repository thus
 * all write the same one, and none of them ends up holding a key the stored config was not sealed with.
 */
export function repositoryIdentity(locationSecret: string | Uint8Array, namespace: string): RepositoryIdentity {
  if (locationSecret.length === 0) throw new Error("the storage location's repository password secret is empty");
  const derive = (what: string, length: number): Buffer => {
    const out: Buffer[] = [];
    for (let i = 0; out.length * 32 < length; i++)
      out.push(createHmac('sha256', locationSecret).update(`ferry.dev/${what}/${i}/${namespace}`).digest());
    return Buffer.concat(out).subarray(0, length);
  };
  let draw = 0;
  const polynomial = derivePolynomial((n) => derive(`polynomial/${draw++}`, n), 10_000);
  return {
    masterKey: {
      encrypt: derive('master-key/encrypt', 32),
      macK: derive('master-key/mac-k', 16),
      macR: derive('master-key/mac-r', 16),
    },
    polynomial,
    id: derive('repository-id', 32).toString('hex'),
  };
}
