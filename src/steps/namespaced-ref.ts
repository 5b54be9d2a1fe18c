// The argument of the steps that work on one namespaced object of a kind (a BackupSchedule, an AppRestore):
// "<namespace>/<name>", optionally after "<Kind>/" in any case.

export interface NamespacedRef {
  namespace: string;
  name: string;
}

export function parseNamespacedRef(kind: string, text: string): NamespacedRef {
  const parts = text.split('/');
  if (parts.length === 3 && parts[0].toLowerCase() === kind.toLowerCase()) parts.shift();
  if (parts.length !== 2 || !parts[0] || !parts[1])
    throw new Error(
      `"${text}" does not name ${/^[AEIOU]/.test(kind) ? 'an' : 'a'} ${kind}: expected <namespace>/<name>`,
    );
  return { namespace: parts[0], name: parts[1] };
}
