// Which namespaces a BackupStorageLocation serves: its own rules, read the same way for backups and restores.
import type { BackupStorageLocation } from '../shared/api/types.ts';

const everyNamespace = '*';

/** May PVCs of `namespace` be backed up to (and restored within) this location? */
export function allowsNamespace(location: BackupStorageLocation, namespace: string): boolean {
  const allowed = location.spec.allowedNamespaces ?? [];
  return allowed.includes(everyNamespace) || allowed.includes(namespace);
}

/** May a restore into `target` read the repository of `source`? Within one namespace the namespace rule decides. */
export function allowsRestore(location: BackupStorageLocation, source: string, target: string): boolean {
  if (source === target) return allowsNamespace(location, target);
  return (location.spec.crossNamespaceRestores ?? []).some((rule) => rule.from === source && (rule.to.includes(everyNamespace) || rule.to.includes(target)));
}
