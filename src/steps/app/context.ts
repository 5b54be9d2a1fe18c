// What the app-backup step runs with: the Kubernetes access and clock every step has, how often it looks at its
// DataUploads, and the hooks it runs through (a runner and a pod exec, passed in so tests need no cluster and the
// step does not depend on how hooks reach containers). It writes the AppBackup's status and Events from here.
import type { AppBackup, AppBackupStatus, Hook, HookRun, HookStage } from '../../shared/api/app.ts';
import type { PodExec } from '../../shared/hooks/exec.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import { updateStatus } from '../../shared/kube/status.ts';
import type { NamespacedRef } from '../namespaced-ref.ts';
import { stepEvent, type PollingContext, type StepEvent } from './step-context.ts';

export type AppBackupObject = AppBackup & KubeObject;

/** Runs one stage's hooks (src/shared/hooks/stage.ts runStage): pre stops at the first failing onError Fail hook. */
export type HookRunner = (
  ctx: { kube: Kube; exec: PodExec; namespace: string; signal?: AbortSignal; now?: () => Date },
  stage: HookStage,
  hooks: Hook[],
) => Promise<{ runs: HookRun[]; failure?: string }>;

export interface AppBackupDeps {
  runHooks: HookRunner;
  exec: PodExec;
}

export interface AppBackupContext extends AppBackupDeps, PollingContext {}

export type AppRef = NamespacedRef;

export function readAppBackup(ctx: AppBackupContext, ref: AppRef): Promise<AppBackupObject | undefined> {
  return ctx.kube.get<AppBackupObject>({ kind: 'AppBackup', namespace: ref.namespace, name: ref.name });
}

/** The AppBackup moved on without this step (another attempt, or the sweep giving up): this run stops. */
export class PhaseMoved extends Error {}

/**
 * A status write on the newest AppBackup (a Conflict rereads and reapplies, so spec.cancel set meanwhile is never
 * lost: only status is written). `change` returns false when nothing needs writing; it runs only while the phase
 * is one of `from`, else PhaseMoved is thrown.
 */
export function writeStatus(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  from: readonly (AppBackupStatus['phase'] | undefined)[],
  change: (status: AppBackupStatus, fresh: AppBackupObject) => boolean | void,
): Promise<AppBackupObject> {
  return updateStatus(ctx.kube, ab, (fresh) => {
    if (!from.includes(fresh.status?.phase))
      throw new PhaseMoved(`AppBackup ${fresh.metadata.name} is ${fresh.status?.phase ?? 'New'} now`);
    const status: AppBackupStatus = { ...fresh.status };
    const result = change(status, fresh);
    fresh.status = status;
    return result;
  });
}

/** An Event about the AppBackup; a failure to write it is logged, never fatal. */
export function appEvent(ctx: AppBackupContext, ab: AppBackupObject, ev: StepEvent): Promise<void> {
  return stepEvent(ctx, ab, ev, { action: 'Backup', controller: 'ferry.dev/step-app-backup' });
}

/** Status messages and volume messages stay readable in `kubectl describe`. */
export function bounded(text: string, max = 4000): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
