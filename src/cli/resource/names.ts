// Positional arguments that name Kubernetes objects: NAME, and KIND/NAME for commands that act on several kinds.
// Checked before any request, so a typo is bad usage (exit 2) with the rule it broke, not an apiserver error.
import { UsageError } from '../run.ts';

const dnsSubdomain = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** A required object name; `what` names the argument in the message (e.g. "NAME", "--pvc"). */
export function objectName(value: unknown, what: string): string {
  if (value === undefined || value === '' || value === true) throw new UsageError(`${what} is required`);
  const name = String(value);
  if (name.length > 253 || !dnsSubdomain.test(name)) {
    throw new UsageError(
      `${what} "${name}" is not a valid object name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit`,
    );
  }
  return name;
}

/** An object name that may be left out (undefined then), checked like `objectName` when given. */
export function optionalName(value: unknown, what: string): string | undefined {
  return value === undefined ? undefined : objectName(value, what);
}

/**
 * KIND/NAME with KIND any of `aliases`' keys (case-insensitive), e.g. dataupload/nightly or backup/nightly.
 * `what` names the argument in the message.
 */
export function kindAndName<K extends string>(
  value: unknown,
  aliases: Readonly<Record<string, K>>,
  what = 'KIND/NAME',
): { kind: K; name: string } {
  const text = value === undefined || value === true ? '' : String(value);
  const slash = text.indexOf('/');
  const kinds = Object.keys(aliases).join(', ');
  if (slash < 0)
    throw new UsageError(
      `${what} ${text ? `"${text}"` : 'is required and'} must be KIND/NAME with KIND one of: ${kinds}`,
    );
  const alias = text.slice(0, slash).toLowerCase();
  const kind = aliases[alias];
  if (kind === undefined)
    throw new UsageError(`${what}: "${text.slice(0, slash)}" is not a kind this command handles; use one of: ${kinds}`);
  return { kind, name: objectName(text.slice(slash + 1), what) };
}
