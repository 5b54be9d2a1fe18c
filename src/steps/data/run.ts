// Runs a step for one named resource or, in sweep mode, for every resource whose phase says it is due. The
// runner owns what all steps share: finding the resource, leaving other data movers' resources alone, waiting
// briefly for the resource to reach the step's phase (the dispatcher may start a Job before the status write that
// caused it is visible), turning a cancel request or a deletion into Canceling, and recording permanent failures.
import { dueStep, phasesOf, finalizerName } from '../../shared/api/phases.ts';
import type { FerryResource, Phase } from '../../shared/api/types.ts';
import { canCancel } from '../../shared/api/phases.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { isOurs, resourceRef, type ResourceRef } from '../../shared/step-job/contract.ts';
import type { Outcome, Step, StepContext } from '../context.ts';
import { failureReason, isPermanentFailure, PhaseMovedError } from './failure.ts';
import { fail, transition } from './transition.ts';

/** Whether `ctx.step` is the step to run for `r` now. */
export function isDue(step: StepContext['step'], r: FerryResource): boolean {
  const deleting = Boolean(r.metadata.deletionTimestamp);
  if (dueStep(r.kind, { phase: r.status?.phase, deleting }) !== step) return false;
  return step !== 'delete' || (r.metadata.finalizers ?? []).includes(finalizerName);
}

function wantsCancel(step: StepContext['step'], r: FerryResource): boolean {
  if (step === 'finalize' || step === 'delete') return false;
  return (r.spec.cancel === true || Boolean(r.metadata.deletionTimestamp)) && canCancel(r.status?.phase);
}

async function read(ctx: StepContext, ref: ResourceRef): Promise<FerryResource | undefined> {
  return ctx.kube.get<FerryResource & KubeObject>({ kind: ref.kind, namespace: ref.namespace, name: ref.name });
}

export async function runOne(ctx: StepContext, step: Step, ref: ResourceRef): Promise<Outcome> {
  const deadline = ctx.now().getTime() + ctx.settings.phaseWaitMs;
  for (;;) {
    const r = await read(ctx, ref);
    if (!r) return { outcome: 'Skipped', reason: `${ref.kind} ${ref.namespace}/${ref.name} does not exist.` };
    if (!isOurs(r))
      return { outcome: 'Skipped', reason: `${resourceRef(r)} belongs to data mover "${r.spec.dataMover}".` };
    if (isDue(ctx.step, r)) return handle(ctx, step, r);
    if (ctx.now().getTime() >= deadline) {
      const phase = r.status?.phase ?? 'New';
      return {
        outcome: 'Skipped',
        reason: `${resourceRef(r)} is in phase ${phase}${r.metadata.deletionTimestamp ? ' (being deleted)' : ''}, which is not the ${ctx.step} step's.`,
      };
    }
    await ctx.sleep(Math.min(ctx.settings.pollMs, 1000), ctx.signal);
  }
}

/** Runs the step for a resource that is due, turning cancels and permanent failures into phases. */
export async function handle(ctx: StepContext, step: Step, r: FerryResource): Promise<Outcome> {
  if (wantsCancel(ctx.step, r)) {
    const why = r.spec.cancel ? 'cancel was requested' : 'the resource is being deleted';
    await transition(ctx, r, {
      to: 'Canceling',
      reason: 'Canceling',
      note: `Canceling ${resourceRef(r)}: ${why}.`,
      condition: { type: 'Succeeded', status: 'False' },
    });
    return { outcome: 'Canceled', reason: `${why}; finalize cleans up` };
  }
  try {
    return await step(ctx, r);
  } catch (err) {
    if (err instanceof PhaseMovedError) return { outcome: 'Skipped', reason: err.message };
    if (ctx.signal.aborted || !isPermanentFailure(err) || ctx.step === 'delete') throw err;
    return recordFailure(ctx, r, err as Error);
  }
}

/** Failing (or Failed, when finalize itself cannot finish a cleanup) with the error's message. */
async function recordFailure(ctx: StepContext, r: FerryResource, err: Error): Promise<Outcome> {
  const fresh = await read(ctx, { kind: r.kind, namespace: r.metadata.namespace!, name: r.metadata.name });
  const phase: Phase = fresh?.status?.phase ?? 'New';
  if (!fresh || fresh.metadata.uid !== r.metadata.uid || !phasesOf(fresh.kind, ctx.step).includes(phase)) {
    return { outcome: 'Skipped', reason: `${resourceRef(r)} moved on; not recording: ${err.message}` };
  }
  const reason = failureReason(err);
  ctx.log.error(err.message, { reason });
  if (ctx.step === 'finalize' && phase !== 'Finalizing') {
    await transition(ctx, fresh, {
      to: 'Failed',
      reason,
      note: err.message,
      warning: true,
      condition: { type: 'Succeeded', status: 'False' },
      status: (s) => {
        s.completionTimestamp = ctx.now().toISOString();
      },
    });
  } else {
    await fail(ctx, fresh, reason, err.message);
  }
  return { outcome: 'Failed', reason: err.message };
}

/** Every resource the step is due for, one after the other; one resource's error does not stop the others. */
export async function runSweep(ctx: StepContext, step: Step): Promise<Outcome> {
  if (ctx.step === 'transfer')
    return {
      outcome: 'Skipped',
      reason: 'transfer runs only in the Job that mounts its volume; the dispatcher starts one per resource.',
    };
  const counters = { due: 0, advanced: 0, failed: 0, skipped: 0, errors: 0 };
  for (const kind of ['DataUpload', 'DataDownload'] as const) {
    const all = await ctx.kube.list<FerryResource & KubeObject>(kind);
    for (const r of all.filter((x) => isOurs(x) && isDue(ctx.step, x))) {
      counters.due++;
      const log = ctx.log.with({ resource: resourceRef(r) });
      try {
        const out = await handle({ ...ctx, log }, step, r);
        if (out.outcome === 'Failed') counters.failed++;
        else if (out.outcome === 'Skipped' || out.outcome === 'Waiting') counters.skipped++;
        else counters.advanced++;
        log.info(out.reason, { outcome: out.outcome });
      } catch (err) {
        if (ctx.signal.aborted) throw err;
        counters.errors++;
        log.error(`the ${ctx.step} step failed; the next sweep tries again`, { error: (err as Error).message });
      }
    }
  }
  const reason = `swept ${counters.due} resource(s) due for ${ctx.step}: ${counters.advanced} advanced, ${counters.failed} failed, ${counters.errors} errors`;
  return { outcome: counters.errors > 0 ? 'Waiting' : 'Advanced', reason, counters };
}
