// What `get` and `describe` read: one named object (its absence is an error naming it), or every object of a kind
// in a namespace or in all of them, sorted by namespace and name.
import type { ArgsDef } from 'citty';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { resourceInfo, type KindName } from '../../shared/kube/resources.ts';

export const listArgs = {
  'all-namespaces': { type: 'boolean', alias: 'A', description: 'list in every namespace', default: false },
} as const satisfies ArgsDef;

/** The object, or an error saying which one is missing where. */
export async function fetchOne<T extends KubeObject>(
  kube: Kube,
  kind: KindName,
  namespace: string | undefined,
  name: string,
): Promise<T> {
  const obj = await kube.get<T>({ kind, namespace, name });
  if (!obj)
    throw new Error(
      resourceInfo(kind).namespaced
        ? `${kind} "${name}" not found in namespace ${namespace}.`
        : `${kind} "${name}" not found.`,
    );
  return obj;
}

export async function fetchAll<T extends KubeObject>(
  kube: Kube,
  kind: KindName,
  namespace: string | undefined,
): Promise<T[]> {
  const items = await kube.list<T>(kind, { namespace });
  return items.sort(
    (a, b) =>
      (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
      a.metadata.name.localeCompare(b.metadata.name),
  );
}

/** "No DataUploads found in namespace x." as kubectl would say it. */
export function nothingFound(kind: KindName, namespace: string | undefined): string {
  return namespace && resourceInfo(kind).namespaced
    ? `No ${kind}s found in namespace ${namespace}.`
    : `No ${kind}s found.`;
}
