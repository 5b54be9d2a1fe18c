// Adding and removing ferry's finalizer with optimistic concurrency: a patch carrying the resourceVersion it was
// computed from, redone on a Conflict, so another writer's finalizers are never lost.
import { finalizerName } from '../../shared/api/phases.ts';
import type { FerryResource } from '../../shared/api/types.ts';
import { isConflict } from '../../shared/kube/errors.ts';
import { keyOf, type KubeObject } from '../../shared/kube/kube.ts';
import type { StepContext } from '../context.ts';

async function setFinalizers(
  ctx: StepContext,
  r: FerryResource,
  edit: (list: string[]) => string[] | undefined,
): Promise<FerryResource | undefined> {
  let current: FerryResource | undefined = r;
  for (let attempt = 0; attempt < 20 && current; attempt++) {
    const next = edit([...(current.metadata.finalizers ?? [])]);
    if (!next) return current;
    try {
      return await ctx.kube.patch<FerryResource & KubeObject>(keyOf(current as FerryResource & KubeObject), {
        metadata: { resourceVersion: current.metadata.resourceVersion, finalizers: next },
      });
    } catch (err) {
      if (!isConflict(err)) throw err;
      current = await ctx.kube.get<FerryResource & KubeObject>(keyOf(current as FerryResource & KubeObject));
    }
  }
  return current;
}

export function addFinalizer(ctx: StepContext, r: FerryResource): Promise<FerryResource | undefined> {
  return setFinalizers(ctx, r, (list) => (list.includes(finalizerName) ? undefined : [...list, finalizerName]));
}

/** Removes the finalizer; once it was the last one, Kubernetes deletes the resource. */
export function removeFinalizer(ctx: StepContext, r: FerryResource): Promise<FerryResource | undefined> {
  return setFinalizers(ctx, r, (list) =>
    list.includes(finalizerName) ? list.filter((f) => f !== finalizerName) : undefined,
  );
}
