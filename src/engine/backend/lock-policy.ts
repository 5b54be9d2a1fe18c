// An object-lock policy held to what S3 allows, checked where a location is opened, before any request.
import type { ObjectLockPolicy } from './backend.ts';
import { PermanentError } from './backend.ts';

const lockModes = ['GOVERNANCE', 'COMPLIANCE'];
/** S3 refuses retention dates further than 100 years ahead */
const maxRetentionMs = 100 * 365 * 24 * 3600_000;

/** The policy as a user may have written it, held to what S3 allows; the message names the setting. */
export function checkLockPolicy(policy: ObjectLockPolicy): ObjectLockPolicy {
  if (!lockModes.includes(policy.mode)) {
    throw new PermanentError(
      `objectLock.mode "${String(policy.mode)}" is not an S3 Object Lock mode: use GOVERNANCE or COMPLIANCE.`,
    );
  }
  if (!Number.isSafeInteger(policy.retentionMs) || policy.retentionMs < 1000 || policy.retentionMs > maxRetentionMs) {
    throw new PermanentError(
      `objectLock.retention ${String(policy.retentionMs)} ms is out of range: from one second to 100 years.`,
    );
  }
  return policy;
}
