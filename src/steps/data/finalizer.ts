// ferry's finalizer on a DataUpload or DataDownload, held while its repository data may still need freeing.
import { finalizerName } from '../../shared/api/phases.ts';
import type { FerryResource } from '../../shared/api/types.ts';
import * as finalizers from '../../shared/kube/finalizers.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import type { StepContext } from '../context.ts';

type Resource = FerryResource & KubeObject;

export function addFinalizer(ctx: StepContext, r: FerryResource): Promise<FerryResource | undefined> {
  return finalizers.addFinalizer(ctx.kube, r as Resource, finalizerName);
}

/** Removes the finalizer; once it was the last one, Kubernetes deletes the resource. */
export function removeFinalizer(ctx: StepContext, r: FerryResource): Promise<FerryResource | undefined> {
  return finalizers.removeFinalizer(ctx.kube, r as Resource, finalizerName);
}
