// What the app-restore step works with: the cluster, its clock and poll interval, and the AppRestore it drives.
// Every status write goes through updateStatus (resourceVersion preconditions: a conflict rereads and the change
// is judged again on the newest object), so a transition never overwrites one made meanwhile and never touches
// spec, where a user's spec.cancel lives.
import { appRestoreTerminalPhases } from '../../shared/api/app.ts';
import type { AppRestore, AppRestorePhase, AppRestoreStatus } from '../../shared/api/app.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { updateStatus } from '../../shared/kube/status.ts';
import type { NamespacedRef } from '../namespaced-ref.ts';
import { stepEvent, type PollingContext, type StepEvent } from './step-context.ts';

export type Restore = AppRestore & KubeObject;

export type RestoreContext = PollingContext;

export type RestoreRef = NamespacedRef;

export function isRestoreTerminal(r: Restore): boolean {
  return appRestoreTerminalPhases.includes(r.status?.phase ?? 'New');
}

/** spec.cancel, or a deletion: either stops the restore. */
export function cancelRequested(r: Restore): boolean {
  return r.spec.cancel === true || r.metadata.deletionTimestamp !== undefined;
}

export function readRestore(ctx: RestoreContext, ref: RestoreRef): Promise<Restore | undefined> {
  return ctx.kube.get<Restore>({ kind: 'AppRestore', namespace: ref.namespace, name: ref.name });
}

/**
 * A status write on the newest AppRestore, made only while it is in one of `from` (else the fresh object is
 * returned unwritten: another run moved it on). `change` returns false when nothing needs writing.
 */
export function writeRestoreStatus(
  ctx: RestoreContext,
  r: Restore,
  from: readonly AppRestorePhase[],
  change: (status: AppRestoreStatus, fresh: Restore) => boolean | void,
): Promise<Restore> {
  return updateStatus(ctx.kube, r, (fresh) => {
    if (!from.includes(fresh.status?.phase ?? 'New')) return false;
    const status: AppRestoreStatus = { ...fresh.status };
    const result = change(status, fresh);
    fresh.status = status;
    return result;
  });
}

/** An Event about the AppRestore; a failure to write it is logged, never fatal. */
export function restoreEvent(ctx: RestoreContext, r: Restore, ev: StepEvent): Promise<void> {
  return stepEvent(ctx, r, ev, { action: 'Restore', controller: 'ferry.dev/step-app-restore' });
}
