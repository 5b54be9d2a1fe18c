// spec.freeze: the file system of each backed-up PVC frozen (fsfreeze, util-linux) in every Running pod that mounts
// it, from after the pre hooks until the snapshots are cut, through the same pod exec the hooks use. Each mount is
// written to status.frozen BEFORE its freeze runs, so whatever may be frozen is known to a step that resumes after a
// crash, which thaws it first. A thaw is attempted for every recorded mount, also after a failed freeze (the freeze
// may have taken effect); the runs land in status.hooks as hook "fsfreeze".
import type { FrozenMount, HookRun, HookStage } from '../../shared/api/app.ts';
import type { ExecResult } from '../../shared/hooks/exec.ts';
import { lastText } from '../../shared/hooks/output.ts';
import { defaultHookTimeoutMs } from '../../shared/hooks/stage.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { freezeHook } from '../../shared/app/names.ts';
import { appEvent, writeStatus, type AppBackupContext, type AppBackupObject } from './context.ts';

interface Pod extends KubeObject {
  spec?: {
    volumes?: { name: string; persistentVolumeClaim?: { claimName?: string } }[];
    containers?: { name: string; volumeMounts?: { name: string; mountPath: string }[] }[];
  };
  status?: { phase?: string };
}

/**
 * Each (pod, PVC) once: the Running pods of the AppBackup's namespace, by name, and in each the first container
 * with a file system mount (volumeMounts; a block device under volumeDevices has no file system to freeze) of a
 * volume naming a backed-up claim.
 */
async function mountsOf(ctx: AppBackupContext, ab: AppBackupObject, pvcs: string[]): Promise<FrozenMount[]> {
  const namespace = ab.metadata.namespace!;
  const pods = (await ctx.kube.list<Pod>('Pod', { namespace }))
    .filter((p) => p.metadata.namespace === namespace && p.status?.phase === 'Running' && !p.metadata.deletionTimestamp)
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  const mounts: FrozenMount[] = [];
  for (const pod of pods) {
    for (const pvc of pvcs) {
      const volumes = new Set(
        (pod.spec?.volumes ?? []).filter((v) => v.persistentVolumeClaim?.claimName === pvc).map((v) => v.name),
      );
      if (volumes.size === 0) continue;
      for (const c of pod.spec?.containers ?? []) {
        const mount = (c.volumeMounts ?? []).find((m) => volumes.has(m.name));
        if (!mount) continue;
        mounts.push({ pod: pod.metadata.name, container: c.name, pvc, mountPath: mount.mountPath });
        break;
      }
    }
  }
  return mounts;
}

async function fsfreeze(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  stage: HookStage,
  m: FrozenMount,
  signal?: AbortSignal,
): Promise<HookRun> {
  const flag = stage === 'pre' ? '--freeze' : '--unfreeze';
  const startTime = ctx.now().toISOString();
  let result: ExecResult;
  try {
    result = await ctx.exec.exec({
      namespace: ab.metadata.namespace!,
      pod: m.pod,
      container: m.container,
      command: ['fsfreeze', flag, m.mountPath],
      timeoutMs: defaultHookTimeoutMs,
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    result = { timedOut: false, output: '', error: (err as Error).message };
  }
  const already = alreadyThere(stage, result);
  const ok = (result.exitCode === 0 && !result.error) || already !== '';
  const run: HookRun = {
    stage,
    hook: freezeHook,
    pod: m.pod,
    container: m.container,
    outcome: result.timedOut ? 'TimedOut' : ok ? 'Succeeded' : 'Failed',
    startTime,
    endTime: ctx.now().toISOString(),
  };
  if (result.exitCode !== undefined) run.exitCode = result.exitCode;
  const notes = [
    `${header(stage, m)}${already}`,
    result.output.trim(),
    result.timedOut ? `timed out after ${defaultHookTimeoutMs / 1000} s` : '',
    result.error ?? '',
  ];
  run.output = lastText(notes.filter(Boolean).join('\n'));
  return run;
}

/**
 * A thaw of a file system that is not frozen fails with EINVAL: it is thawed, which is all the thaw is for. A freeze
 * of one that is frozen fails with EBUSY: pods of one node mounting one claim share its file system, which the first
 * pod's freeze froze (and the first thaw thaws). Either is said in the run's output instead of failing it.
 */
function alreadyThere(stage: HookStage, result: ExecResult): string {
  if (result.exitCode !== 1) return '';
  if (stage === 'post') return /Invalid argument/.test(result.output) ? ': it was not frozen' : '';
  return /Device or resource busy/.test(result.output) ? ': it was frozen already' : '';
}

/** The first line of a run's output: which command, for which claim. */
function header(stage: HookStage, m: FrozenMount): string {
  return `fsfreeze ${stage === 'pre' ? '--freeze' : '--unfreeze'} ${m.mountPath} (PVC ${m.pvc})`;
}

/** One line for a status message or an Event: the mount, the pod, how it ended and the end of what it printed. */
function describe(run: HookRun, m: FrozenMount): string {
  const end = run.outcome === 'TimedOut' ? 'timed out' : `exit code ${run.exitCode ?? 'unknown'}`;
  const printed = (run.output ?? '')
    .split('\n')
    .map((l) => l.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim())
    .filter((l) => l && l !== header(run.stage, m))
    .join(' | ')
    .slice(-300);
  return `fsfreeze of ${m.mountPath} (PVC ${m.pvc}) in pod ${m.pod} (container ${m.container}) failed: ${end}${printed ? `, output: ${printed}` : ''}`;
}

/**
 * Freezes every mount of the backed-up claims, one after the other; stops at the first failure (`failure` names the
 * pod, mount and output). What was frozen, or tried, stays in status.frozen for thaw().
 */
export async function freeze(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  pvcs: string[],
  signal: AbortSignal,
): Promise<{ ab: AppBackupObject; failure?: string }> {
  let mounts: FrozenMount[];
  try {
    mounts = await mountsOf(ctx, ab, pvcs);
  } catch (err) {
    return { ab, failure: `could not list the pods to freeze: ${(err as Error).message}` };
  }
  for (const m of mounts) {
    signal.throwIfAborted();
    // recorded first: a crash during the exec leaves a mount that may be frozen, which the next attempt thaws;
    // hooksStarted too, so that attempt also knows no snapshot of this run can be trusted
    ab = await writeStatus(ctx, ab, ['InProgress'], (s) => {
      s.hooksStarted = true;
      s.frozen = [...(s.frozen ?? []), m];
    });
    const run = await fsfreeze(ctx, ab, 'pre', m, signal);
    ab = await writeStatus(ctx, ab, ['InProgress'], (s) => {
      s.hooks = [...(s.hooks ?? []), run];
    });
    if (run.outcome !== 'Succeeded') return { ab, failure: describe(run, m) };
  }
  return { ab };
}

/**
 * Thaws every mount status.frozen names, each once whatever the others do, then clears the list with the runs
 * recorded. Not abortable: it releases the application, so only its own timeout stops an unfreeze.
 */
export async function thaw(ctx: AppBackupContext, ab: AppBackupObject): Promise<AppBackupObject> {
  const frozen = ab.status?.frozen ?? [];
  if (frozen.length === 0) return ab;
  const runs: HookRun[] = [];
  for (const m of frozen) runs.push(await fsfreeze(ctx, ab, 'post', m));
  // recorded in the phase it ran in, like the post hooks (the sweep may have given up on the step meanwhile)
  const written = await writeStatus(ctx, ab, [ab.status?.phase], (s) => {
    s.hooks = [...(s.hooks ?? []), ...runs];
    delete s.frozen;
  });
  for (const [i, run] of runs.entries())
    if (run.outcome !== 'Succeeded')
      await appEvent(ctx, written, {
        type: 'Warning',
        reason: 'ThawFailed',
        note: `${describe(run, frozen[i])}; the file system may still be frozen: run fsfreeze --unfreeze there.`,
      });
  return written;
}
