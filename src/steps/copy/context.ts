// What the copy step runs with (the step environment: Kubernetes access, clock, settings, the engine's storage) and
// how it writes a DataCopy: its status through the status subresource, its Events, each change mirrored into the
// DataUpload's status.copies (./mirror.ts) so the backup shows where its copies are.
import type { DataCopy, DataCopyStatus } from '../../shared/api/copy.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { updateStatus } from '../../shared/kube/status.ts';
import type { StepEnvironment } from '../context.ts';
import type { NamespacedRef } from '../namespaced-ref.ts';
import { stepEvent, type StepEvent } from '../app/step-context.ts';
import { mirrorIntoUpload } from './mirror.ts';

export type CopyContext = StepEnvironment;

export type DataCopyObject = DataCopy & KubeObject;

export function readDataCopy(ctx: CopyContext, ref: NamespacedRef): Promise<DataCopyObject | undefined> {
  return ctx.kube.get<DataCopyObject>({ kind: 'DataCopy', namespace: ref.namespace, name: ref.name });
}

/**
 * A status write on the newest DataCopy (a Conflict rereads and reapplies; spec.cancel set meanwhile is never lost),
 * then the same record in its DataUpload (not for progress, which the record does not show). `change` returns false
 * when nothing needs writing.
 */
export async function writeCopyStatus(
  ctx: CopyContext,
  dc: DataCopyObject,
  change: (status: DataCopyStatus) => boolean | void,
  opts: { mirror: boolean } = { mirror: true },
): Promise<DataCopyObject> {
  const written = await updateStatus(ctx.kube, dc, (fresh) => {
    const status: DataCopyStatus = { ...fresh.status };
    const result = change(status);
    fresh.status = status;
    return result;
  });
  if (opts.mirror) await mirrorIntoUpload(ctx, written);
  return written;
}

/** An Event about the DataCopy (or its DataUpload); a failure to write it is logged, never fatal. */
export function copyEvent(ctx: CopyContext, obj: KubeObject, ev: StepEvent): Promise<void> {
  return stepEvent({ ...ctx, podName: ctx.settings.podName }, obj, ev, {
    action: 'Copy',
    controller: 'ferry.dev/step-copy',
  });
}
