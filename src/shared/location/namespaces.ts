// Which namespaces a BackupStorageLocation serves, read the same way wherever it is asked (the dispatcher at
// admission, the CLI before it creates anything): a namespace backs up to and restores within a location that lists
// it (or lists "*"); a restore that reads another namespace's repository needs a crossNamespaceRestores rule naming
// that source and the target (or "*"). Names match exactly: no prefixes, patterns or case folding.
import type { BackupStorageLocationSpec } from '../api/types.ts';

const everyNamespace = '*';

type Access = Pick<BackupStorageLocationSpec, 'allowedNamespaces' | 'crossNamespaceRestores'>;

function lists(names: unknown, namespace: string): boolean {
  return Array.isArray(names) && (names.includes(everyNamespace) || names.includes(namespace));
}

/** May PVCs of `namespace` be backed up to (and restored within) this location? */
export function backupAllowed(spec: Access, namespace: string): boolean {
  return lists(spec.allowedNamespaces, namespace);
}

/** May a restore into `to` read the repository of `from`? Within one namespace the namespace rule decides. */
export function restoreAllowed(spec: Access, from: string, to: string): boolean {
  if (from === to) return backupAllowed(spec, to);
  const rules = Array.isArray(spec.crossNamespaceRestores) ? spec.crossNamespaceRestores : [];
  return rules.some((rule) => rule.from === from && lists(rule.to, to));
}
