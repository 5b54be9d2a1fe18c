// One stage of an AppBackup's hooks (pre or post): each hook, in order, in every Running pod its selector picks in
// the namespace, sorted by name. A pre stage stops at the first failure of a hook whose onError is Fail (no snapshot
// is taken then); a post stage runs every hook whatever fails, so an application frozen by the pre hooks is always
// thawed. Nothing here throws on what a user wrote: a hook that cannot run is a failed run saying why.
import type { Hook, HookRun, HookStage } from '../api/app.ts';
import { parseDuration } from '../api/duration.ts';
import type { Kube, KubeObject } from '../kube/kube.ts';
import { matchesSelector } from '../schedule/selector.ts';
import type { ExecResult, PodExec } from './exec.ts';
import { lastText } from './output.ts';

export const defaultHookTimeoutMs = 30_000;

export interface StageContext {
  kube: Kube;
  exec: PodExec;
  namespace: string;
  /** aborting kills the running command and ends the stage with what ran */
  signal?: AbortSignal;
  now?: () => Date;
}

export interface StageResult {
  runs: HookRun[];
  /** one line naming the stage, hook, pod/container and what went wrong, for the first failure that counts */
  failure?: string;
}

interface PodTarget {
  pod: string;
  container: string;
  /** why the hook cannot run in this pod (or at all), instead of running it */
  problem?: string;
}

interface Pod extends KubeObject {
  spec?: { containers?: { name: string }[] };
  status?: { phase?: string };
}

export async function runStage(ctx: StageContext, stage: HookStage, hooks: Hook[]): Promise<StageResult> {
  const now = ctx.now ?? (() => new Date());
  const runs: HookRun[] = [];
  let failure: string | undefined;
  for (const hook of hooks) {
    const failOnError = (hook.onError ?? 'Fail') === 'Fail';
    for (const target of await targets(ctx, hook)) {
      if (ctx.signal?.aborted) return { runs, failure: `${stage} hooks canceled before hook "${hook.name}"` };
      const run = await runOne(ctx, stage, hook, target, now);
      runs.push(run);
      if (ctx.signal?.aborted) return { runs, failure: `${stage} hooks canceled: ${describeRun(run)}` };
      if (run.outcome === 'Succeeded' || !failOnError) continue;
      failure ??= `${stage} ${describeRun(run)}`;
      if (stage === 'pre') return { runs, failure };
    }
  }
  return failure === undefined ? { runs } : { runs, failure };
}

/** Where a hook runs: a target per matched pod, or one target carrying the reason it runs nowhere. */
async function targets(ctx: StageContext, hook: Hook): Promise<PodTarget[]> {
  const invalid = hookProblem(hook);
  if (invalid) return [{ pod: '', container: hook.container ?? '', problem: invalid }];
  let listed: Pod[];
  try {
    listed = await ctx.kube.list<Pod>('Pod', { namespace: ctx.namespace });
  } catch (err) {
    // a post stage must go on to its other hooks, so this is the hook's failure, not the stage's
    return [{ pod: '', container: hook.container ?? '', problem: `could not list pods: ${(err as Error).message}` }];
  }
  const pods = listed
    .filter(
      (p) =>
        // the list is namespaced already; a pod of another namespace must never be exec'd into whatever lists it
        p.metadata.namespace === ctx.namespace &&
        p.status?.phase === 'Running' &&
        !p.metadata.deletionTimestamp &&
        matchesSelector(hook.selector, p.metadata.labels),
    )
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  if (pods.length === 0) {
    return [{ pod: '', container: hook.container ?? '', problem: 'no running pod matches its selector' }];
  }
  return pods.map((p) => podTarget(p, hook.container));
}

function podTarget(pod: Pod, wanted: string | undefined): PodTarget {
  const names = (pod.spec?.containers ?? []).map((c) => c.name);
  const container = wanted ?? names[0] ?? '';
  if (names.includes(container)) return { pod: pod.metadata.name, container };
  return {
    pod: pod.metadata.name,
    container,
    problem: `pod ${pod.metadata.name} has no container "${container}" (it has: ${names.join(', ') || 'none'})`,
  };
}

function hookProblem(hook: Hook): string | undefined {
  if (!Array.isArray(hook.command) || hook.command.length === 0) return 'the hook has no command';
  // an absent selector is refused rather than read as "every pod of the namespace"
  if (!hook.selector || typeof hook.selector !== 'object') return 'the hook has no selector';
  try {
    parseDuration(hook.timeout);
  } catch (err) {
    return `timeout: ${(err as Error).message}`;
  }
  return undefined;
}

function timeoutMs(hook: Hook): number {
  // absent or 0: the default, so that a hook is always bounded
  return parseDuration(hook.timeout) || defaultHookTimeoutMs;
}

async function runOne(
  ctx: StageContext,
  stage: HookStage,
  hook: Hook,
  target: PodTarget,
  now: () => Date,
): Promise<HookRun> {
  const startTime = now().toISOString();
  const result = target.problem
    ? { timedOut: false, output: '', error: target.problem }
    : await execIn(ctx, hook, target);
  const run: HookRun = {
    stage,
    hook: hook.name,
    pod: target.pod,
    container: target.container,
    outcome: result.timedOut ? 'TimedOut' : result.exitCode === 0 && !result.error ? 'Succeeded' : 'Failed',
    startTime,
    endTime: now().toISOString(),
  };
  if (result.exitCode !== undefined) run.exitCode = result.exitCode;
  const notes = [result.timedOut ? `timed out after ${timeoutMs(hook) / 1000} s` : '', result.error ?? ''];
  const output = notes.filter(Boolean).reduce(withLine, result.output);
  if (output) run.output = lastText(output);
  return run;
}

async function execIn(ctx: StageContext, hook: Hook, target: PodTarget): Promise<ExecResult> {
  try {
    return await ctx.exec.exec({
      namespace: ctx.namespace,
      pod: target.pod,
      container: target.container,
      command: hook.command,
      timeoutMs: timeoutMs(hook),
      signal: ctx.signal,
    });
  } catch (err) {
    return { timedOut: false, output: '', error: (err as Error).message };
  }
}

/** The output with a line of ferry's own at its end, where the failure message looks. */
function withLine(output: string, line: string): string {
  return output && !output.endsWith('\n') ? `${output}\n${line}` : `${output}${line}`;
}

/** 'hook "quiesce" failed with exit code 3 in pod db-0/postgres: <the output's last lines>', on one line. */
function describeRun(run: HookRun): string {
  const what =
    run.outcome === 'TimedOut'
      ? 'timed out'
      : run.exitCode !== undefined
        ? `failed with exit code ${run.exitCode}`
        : 'failed';
  const where = run.pod ? ` in pod ${run.pod}/${run.container}` : '';
  const tail = lastLines(run.output ?? '');
  return `hook "${run.hook}" ${what}${where}${tail ? `: ${tail}` : ''}`;
}

const tailChars = 300;

function lastLines(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim())
    .filter(Boolean);
  const text = lines.slice(-3).join(' | ');
  return text.length > tailChars ? `…${text.slice(-tailChars)}` : text;
}
