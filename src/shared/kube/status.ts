// Status writes with optimistic concurrency: change a fresh copy, write it with its resourceVersion, and on a
// Conflict read the object again and reapply the change. The change function decides on what it reads, so a
// transition checks its precondition (e.g. the phase it expects) against the latest state every time.
import { isConflict, KubeError } from './errors.ts';
import { describeKey, keyOf, type Kube, type KubeObject } from './kube.ts';

const maxConflicts = 20;

/**
 * Applies `change` to the newest `obj` and writes its status. `change` returns false when nothing needs writing
 * (the fresh object is returned as is); it may throw to give up (e.g. the resource moved on without us).
 */
export async function updateStatus<T extends KubeObject>(
  kube: Kube,
  obj: T,
  change: (fresh: T) => boolean | void,
): Promise<T> {
  let fresh = structuredClone(obj);
  for (let attempt = 1; ; attempt++) {
    const next = structuredClone(fresh);
    if (change(next) === false) return fresh;
    try {
      return await kube.replaceStatus(next);
    } catch (err) {
      if (!isConflict(err) || attempt >= maxConflicts) throw err;
      const reread = await kube.get<T>(keyOf(obj));
      if (!reread)
        throw new KubeError(
          404,
          'NotFound',
          `${describeKey(keyOf(obj))} was deleted while its status was being written`,
        );
      fresh = reread;
    }
  }
}
