// Names and label values at Kubernetes' limits. ferry derives the names of what it makes (CronJobs, Secrets, run
// DataUploads) and label values (a resource's name on its Jobs) from names users choose, which may be longer than
// the derived thing allows: a label value stops at 63 characters, a CronJob name at 52, an object name at 253.
// A text that fits is kept as it is; a longer one keeps its head and ends in a hash of the whole text, so the result
// is the same on every run (a re-run finds what an earlier one made) and two texts sharing their first 63
// characters still differ.
import { createHash } from 'node:crypto';

/** The longest label value, and the longest name of an object that carries its name as a label (Jobs, CronJob pods). */
export const maxLabelValue = 63;
/** The longest name of most objects (a DNS-1123 subdomain). */
export const maxObjectName = 253;

/** Hex digits of the hash a shortened text ends with: 64 bits, so texts differing past the head do not meet. */
const hashLength = 16;

function hashOf(text: string, length: number): string {
  return createHash('sha256').update(text).digest('hex').slice(0, length);
}

/**
 * `text` within `max` characters: itself when it fits, else its first characters (without trailing '-', '.' or
 * '_', so the result stays a valid name or label value) then '-' and a hash of the whole text.
 */
export function fitted(text: string, max: number): string {
  if (text.length <= max) return text;
  const length = Math.min(hashLength, max - 1);
  const head = text.slice(0, max - length - 1).replace(/[-._]+$/, '');
  return head ? `${head}-${hashOf(text, length)}` : hashOf(text, max);
}

/** A label value standing for `text` (a name or `<namespace>.<name>`): the text itself when it fits in 63 characters. */
export function labelValue(text: string): string {
  return fitted(text, maxLabelValue);
}
