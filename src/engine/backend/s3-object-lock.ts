// S3 Object Lock for a repository in a bucket created with it: every object ferry writes (lock files aside) carries
// retention in the policy's mode, and retention is extended on request. Such a bucket is versioned, so removing an
// object means removing each of its versions (a plain DELETE only hides it behind a delete marker and frees nothing);
// an object is removed only when none of its versions is retained, and nothing still retained is even tried, with a
// policy or without one (removeVersions).
import type { Handle, ObjectLockPolicy } from './backend.ts';
import { PermanentError } from './backend.ts';
import { LockedError } from './errors.ts';
import { checkLockPolicy } from './lock-policy.ts';
import { contentMD5, type SignedS3 } from './s3-signed.ts';

export class ObjectLocker {
  readonly policy: ObjectLockPolicy;
  readonly #requests: SignedS3;
  readonly #location: string;
  readonly #bucket: string;

  constructor(requests: SignedS3, policy: ObjectLockPolicy, where: { location: string; bucket: string }) {
    this.policy = checkLockPolicy(policy);
    this.#requests = requests;
    this.#location = where.location;
    this.#bucket = where.bucket;
  }

  /** Refuses a bucket without Object Lock: its objects would silently go unprotected. */
  async checkBucket(): Promise<void> {
    if (await this.#requests.objectLockEnabled()) return;
    throw new PermanentError(
      `objectLock: bucket "${this.#bucket}" of ${this.#location} does not have S3 Object Lock enabled, so mode ${this.policy.mode} retention cannot be set. ` +
        'Object Lock can only be enabled when a bucket is created (header x-amz-bucket-object-lock-enabled: true): use such a bucket, or open the repository without an object-lock policy.',
    );
  }

  /** The headers of a PUT whose object gets retention; S3 requires Content-MD5 (or a checksum) on those. */
  headers(h: Handle, body: Uint8Array): Record<string, string> {
    // lock files are removed by their holder within minutes; retention would leave them blocking others
    if (h.type === 'lock') return {};
    return {
      'content-md5': contentMD5(body),
      'x-amz-object-lock-mode': this.policy.mode,
      'x-amz-object-lock-retain-until-date': this.#until().toISOString(),
    };
  }

  /** Sets the current version's retention to now + the policy's period when it ends sooner. */
  async extend(key: string): Promise<boolean> {
    const until = this.#until();
    const current = await this.#requests.head(key);
    if (current.retainUntil && current.retainUntil >= until) return false;
    // S3 lets nobody turn COMPLIANCE retention into GOVERNANCE: an object keeps the stricter mode it has
    const mode = current.lockMode === 'COMPLIANCE' ? 'COMPLIANCE' : this.policy.mode;
    await this.#requests.putRetention(key, mode, until);
    return true;
  }

  #until(): Date {
    // whole seconds: S3 stores retention dates at that precision, and an extension compares against them
    return new Date(Math.ceil((Date.now() + this.policy.retentionMs) / 1000) * 1000);
  }
}

/**
 * Removes every version of `key` from a bucket with Object Lock, unless one is still retained: then nothing is
 * deleted and the call rejects with a LockedError. Whether or not a policy is given: a prune run without one must
 * neither hide retained packs behind delete markers nor leave the versions it could free.
 */
export async function removeVersions(requests: SignedS3, key: string, h: Handle, location: string): Promise<void> {
  const versions = [];
  let next;
  do {
    const page = await requests.listVersions(key, next);
    versions.push(...page.versions.filter((v) => v.key === key));
    next = page.next;
  } while (next);
  let until: Date | undefined;
  for (const v of versions) {
    if (v.deleteMarker) continue;
    const head = await requests.head(key, v.versionId);
    if (head.legalHold) throw new LockedError(location, h, null);
    const retained = head.retainUntil;
    if (retained && retained.getTime() > Date.now() && (!until || retained > until)) until = retained;
  }
  if (until) throw new LockedError(location, h, until);
  for (const v of versions) await requests.delete(key, v.versionId);
}
