// The AppBackup's hook stages as the step runs them: hooksStarted is written before the first pre hook runs (so a
// step that resumes after a crash knows post hooks are owed), every run is recorded in status.hooks, a failure
// shows in the HooksSucceeded condition and a Warning Event, and whether post hooks are still owed or failed is
// read back from status alone.
import type { Hook, HookRun, HookStage } from '../../shared/api/app.ts';
import { setCondition } from '../../shared/kube/conditions.ts';
import { appEvent, bounded, writeStatus, type AppBackupContext, type AppBackupObject } from './context.ts';
import { freezeHook } from '../../shared/app/names.ts';

/**
 * The post hooks have not run yet (after the snapshots they run whether or not there were pre hooks); the thaw of
 * spec.freeze is recorded as a post run too, and comes before them.
 */
export function postHooksDue(ab: AppBackupObject): boolean {
  return !(ab.status?.hooks ?? []).some((r) => r.stage === 'post' && r.hook !== freezeHook);
}

/** Pre hooks ran (or were starting) and post hooks have not: the application may be held quiet. */
export function postHooksOwed(ab: AppBackupObject): boolean {
  return Boolean(ab.status?.hooksStarted) && postHooksDue(ab);
}

/** A post hook with onError Fail failed: the data is fine, the application may need a look. */
export function postHookFailed(ab: AppBackupObject): boolean {
  const post = ab.spec.hooks?.post ?? [];
  return (ab.status?.hooks ?? []).some(
    (r) =>
      r.stage === 'post' &&
      r.outcome !== 'Succeeded' &&
      (post.find((h) => h.name === r.hook)?.onError ?? 'Fail') === 'Fail',
  );
}

function describeRun(r: HookRun): string {
  const end = r.outcome === 'TimedOut' ? 'timed out' : `exit code ${r.exitCode ?? 'unknown'}`;
  return `${r.stage} hook ${r.hook} in pod ${r.pod} (container ${r.container}) ${r.outcome === 'Succeeded' ? 'succeeded' : `failed: ${end}${r.output ? `, output: ${r.output}` : ''}`}`;
}

function consequence(r: HookRun, hooks: Hook[]): string {
  if ((hooks.find((h) => h.name === r.hook)?.onError ?? 'Fail') === 'Continue')
    return 'onError is Continue, the backup goes on';
  return r.stage === 'pre' ? 'no snapshot is taken' : 'the backup ends PartiallyFailed at best';
}

/**
 * Runs one stage's hooks and records them; `failure` is set when an onError Fail hook failed (for pre: the stage
 * stopped there). `signal` kills a running pre hook on cancel or the pod's end; post hooks get none: they release
 * the application, so only their own timeouts stop them.
 */
export async function runHookStage(
  ctx: AppBackupContext,
  ab: AppBackupObject,
  stage: HookStage,
  signal?: AbortSignal,
): Promise<{ ab: AppBackupObject; failure?: string }> {
  const hooks = ab.spec.hooks?.[stage] ?? [];
  if (hooks.length === 0) return { ab };
  if (stage === 'pre')
    ab = await writeStatus(ctx, ab, ['InProgress'], (s) => {
      if (s.hooksStarted) return false;
      s.hooksStarted = true;
    });
  const { runs, failure } = await ctx.runHooks(
    {
      kube: ctx.kube,
      exec: ctx.exec,
      namespace: ab.metadata.namespace!,
      ...(signal ? { signal } : {}),
      now: () => ctx.now(),
    },
    stage,
    hooks,
  );
  const failed = runs.filter((r) => r.outcome !== 'Succeeded');
  // recorded in the phase the stage ran in: post hooks owed by an AppBackup the sweep gave up on run in Failed
  ab = await writeStatus(ctx, ab, [ab.status?.phase], (s, fresh) => {
    const earlier = (s.hooks ?? []).filter((r) => r.outcome !== 'Succeeded');
    s.hooks = [...(s.hooks ?? []), ...runs];
    const ok = failed.length === 0 && earlier.length === 0;
    s.conditions = setCondition(
      fresh.status?.conditions,
      {
        type: 'HooksSucceeded',
        status: ok ? 'True' : 'False',
        reason: ok ? 'AllSucceeded' : failure ? 'HookFailed' : 'HookFailedContinued',
        message: bounded(ok ? `The ${stage} hooks succeeded.` : [...earlier, ...failed].map(describeRun).join('; ')),
      },
      ctx.now(),
    );
  });
  for (const r of failed)
    await appEvent(ctx, ab, {
      type: 'Warning',
      reason: 'HookFailed',
      note: `${describeRun(r)}; ${consequence(r, hooks)}.`,
    });
  if (failed.length === 0)
    await appEvent(ctx, ab, { type: 'Normal', reason: 'HooksSucceeded', note: `The ${stage} hooks succeeded.` });
  return failure ? { ab, failure } : { ab };
}
