// Names and labels of DataCopies, shared by the dispatcher (a CopyPolicy's copies) and the CLI (a copy by hand).
// A policy's copy of a backup has one name, derived from the DataUpload and the policy, so two sweeps (or a sweep
// and the webhook) racing to make it make one: the second create meets AlreadyExists.
import { createHash } from 'node:crypto';
import { fitted, labelValue, maxLabelValue } from '../kube/names.ts';

export const copyLabels = {
  /** on a CopyPolicy's DataCopies: the policy's name (as a label value) */
  policy: 'ferry.dev/copy-policy',
} as const;

/** On a DataUpload the backup sync made from what a location holds: that location's name. */
export const syncedFromAnnotation = 'ferry.dev/synced-from';

const policyHashLength = 8;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, policyHashLength);
}

/** `<dataupload>-<8 hex of the policy's name>`, within 63 characters (a long DataUpload name keeps its head). */
export function policyCopyName(dataUpload: string, policy: string): string {
  return `${fitted(dataUpload, maxLabelValue - policyHashLength - 1)}-${shortHash(policy)}`;
}

/**
 * A copy made by hand: `<dataupload>-to-<location>` within 63 characters, so copying one backup to one location
 * twice by hand finds the first copy instead of making a second.
 */
export function manualCopyName(dataUpload: string, location: string): string {
  return fitted(`${dataUpload}-to-${location}`, maxLabelValue);
}

/** The value of ferry.dev/copy-policy for a policy's name. */
export function policyLabel(policy: string): string {
  return labelValue(policy);
}
