// What the app-backup step runs with: the Kubernetes access and clock every step has, how often it looks at its
// DataUploads, and the hooks it runs through (a runner and a pod exec, passed in so tests need no cluster and the
// step does not depend on how hooks reach containers). It writes the AppBackup's status and Events from here.
import type { AppBackup, AppBackupStatus, Hook, HookRun, HookStage } from '../../shared/api/app.ts';
import type { PodExec } from '../../shared/hooks/exec.ts';
import { emitEvent } from '../../shared/kube/events.ts';
import type { Kube, KubeObject } from '../../shared/kube/kube.ts';
import type { Logger } from '../../shared/kube/logger.ts';
import { updateStatus } from '../../shared/kube/status.ts';

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

export interface AppBackupContext extends AppBackupDeps {
  kube: Kube;
  log: Logger;
  /** ferry's namespace: the storage locations */
  ferryNamespace: string;
  podName: string;
  /** how often the step looks at snapshots, DataUploads and spec.cancel */
  pollMs: number;
  /** SIGTERM of the pod: stop where it is; the next attempt resumes from status */
  signal: AbortSignal;
  now(): Date;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export interface AppRef {
  namespace: string;
  name: string;
}

/** "<namespace>/<name>", optionally after "AppBackup/". */
export function parseAppBackupRef(text: string): AppRef {
  const [first, ...rest] = text.split('/');
  const parts = first.toLowerCase() === 'appbackup' && rest.length === 2 ? rest : [first, ...rest];
  if (parts.length !== 2 || !parts[0] || !parts[1])
    throw new Error(`"${text}" does not name an AppBackup: expected <namespace>/<name>`);
  return { namespace: parts[0], name: parts[1] };
}

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
export async function appEvent(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  ev: { type: 'Normal' | 'Warning'; reason: string; note: string },
): Promise<void> {
  try {
    await emitEvent(
      ctx.kube,
      ab,
      { ...ev, action: 'Backup' },
      { controller: 'ferry.dev/step-app-backup', instance: ctx.podName },
      ctx.now(),
    );
  } catch (err) {
    ctx.log.warn('could not record an Event', { reason: ev.reason, error: (err as Error).message });
  }
}

/** Status messages and volume messages stay readable in `kubectl describe`. */
export function bounded(text: string, max = 4000): string {
  return text.length > max ? `${text.slice(0, max - 3)}...` : text;
}
