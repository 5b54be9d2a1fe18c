// Adding and removing a finalizer with optimistic concurrency: a patch carrying the resourceVersion it was computed
// from, redone on a Conflict, so another writer's finalizers are never lost.
import { isConflict } from './errors.ts';
import { keyOf, type Kube, type KubeObject } from './kube.ts';

const maxConflicts = 20;

async function editFinalizers<T extends KubeObject>(
  kube: Kube,
  obj: T,
  edit: (list: string[]) => string[] | undefined,
): Promise<T | undefined> {
  let current: T | undefined = obj;
  for (let attempt = 0; attempt < maxConflicts && current; attempt++) {
    const next = edit([...(current.metadata.finalizers ?? [])]);
    if (!next) return current;
    try {
      return await kube.patch<T>(keyOf(current), {
        metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: next },
      });
    } catch (err) {
      if (!isConflict(err)) throw err;
      current = await kube.get<T>(keyOf(current));
    }
  }
  return current;
}

/** The object with `name` among its finalizers; undefined when it is gone. */
export function addFinalizer<T extends KubeObject>(kube: Kube, obj: T, name: string): Promise<T | undefined> {
  return editFinalizers(kube, obj, (list) => (list.includes(name) ? undefined : [...list, name]));
}

/** Removes `name`; once it was the last finalizer of an object being deleted, Kubernetes deletes it. */
export function removeFinalizer<T extends KubeObject>(kube: Kube, obj: T, name: string): Promise<T | undefined> {
  return editFinalizers(kube, obj, (list) => (list.includes(name) ? list.filter((f) => f !== name) : undefined));
}
