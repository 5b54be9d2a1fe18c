// Moving a resource from the phase its step found it in to the next: one optimistic-concurrency status write
// (phase, message, the step's record, a condition, whatever the step learned), then an Event saying why. If
// the resource left that phase meanwhile (a cancel, the sweep, a second copy of the Job), nothing is written and
// the step stands down.
import type { FerryResource, Phase } from '../../shared/api/types.ts';
import { rfc3339, setCondition } from '../../shared/kube/conditions.ts';
import { emitEvent } from '../../shared/kube/events.ts';
import type { KubeObject } from '../../shared/kube/kube.ts';
import { updateStatus } from '../../shared/kube/status.ts';
import type { StepContext } from '../context.ts';
import { PhaseMovedError } from './failure.ts';
import { resourceRef } from '../../shared/step-job/contract.ts';

type Status<T extends FerryResource> = NonNullable<T['status']>;

export interface Transition<T extends FerryResource> {
  to: Phase;
  /** UpperCamelCase, for the Event and the condition */
  reason: string;
  /** for the Event, the condition and status.message */
  note: string;
  warning?: boolean;
  /** a condition to set, with the transition's reason and note */
  condition?: { type: string; status: 'True' | 'False' | 'Unknown' };
  /** further status fields the step records */
  status?: (s: Status<T>) => void;
}

/** Writes status with the guards every step needs: the same incarnation of the resource, still in `r`'s phase. */
export async function writeStatus<T extends FerryResource>(
  ctx: StepContext,
  r: T,
  change: (s: Status<T>, fresh: T) => boolean | void,
): Promise<T> {
  const from = r.status?.phase ?? 'New';
  const updated = await updateStatus(ctx.kube, r as T & KubeObject, (fresh) => {
    if (fresh.metadata.uid !== r.metadata.uid)
      throw new PhaseMovedError(`${resourceRef(r)} was deleted and created again while the ${ctx.step} step worked`);
    const phase = fresh.status?.phase ?? 'New';
    if (phase !== from)
      throw new PhaseMovedError(`${resourceRef(r)} moved from ${from} to ${phase} while the ${ctx.step} step worked`);
    fresh.status ??= {};
    return change(fresh.status as Status<T>, fresh);
  });
  return updated as T;
}

export async function transition<T extends FerryResource>(ctx: StepContext, r: T, t: Transition<T>): Promise<T> {
  const now = ctx.now();
  const updated = await writeStatus(ctx, r, (s) => {
    s.phase = t.to;
    s.message = t.note;
    const previous = s.steps?.[ctx.step];
    s.steps = {
      ...s.steps,
      [ctx.step]: {
        ...previous,
        attempts: Math.max(previous?.attempts ?? 1, ctx.settings.attempt ?? 1),
        ...(ctx.settings.jobName ? { job: ctx.settings.jobName } : {}),
        startTime: rfc3339(ctx.startedAt),
        endTime: rfc3339(now),
        outcome: t.to === 'Failing' ? 'Failed' : 'Succeeded',
        message: t.note,
      },
    };
    if (t.condition)
      s.conditions = setCondition(s.conditions, { ...t.condition, reason: t.reason, message: t.note }, now);
    t.status?.(s);
  });
  ctx.log.info(t.note, { phase: t.to, from: r.status?.phase ?? 'New', reason: t.reason });
  await event(ctx, updated, { type: t.warning ? 'Warning' : 'Normal', reason: t.reason, note: t.note });
  return updated;
}

/** An Event about the resource from this step; a failure to write it is logged, never fatal. */
export async function event(
  ctx: StepContext,
  r: FerryResource,
  ev: { type: 'Normal' | 'Warning'; reason: string; note: string },
): Promise<void> {
  try {
    const action = ctx.step[0].toUpperCase() + ctx.step.slice(1);
    await emitEvent(
      ctx.kube,
      r as FerryResource & KubeObject,
      { ...ev, action },
      { controller: `ferry.dev/step-${ctx.step}`, instance: ctx.settings.podName },
      ctx.now(),
    );
  } catch (err) {
    ctx.log.warn('could not record an Event', { reason: ev.reason, error: (err as Error).message });
  }
}

/** Phase Failing with the message; finalize cleans up and sets Failed. */
export function fail<T extends FerryResource>(ctx: StepContext, r: T, reason: string, message: string): Promise<T> {
  return transition(ctx, r, {
    to: 'Failing',
    reason,
    note: message,
    warning: true,
    condition: { type: 'Succeeded', status: 'False' },
  });
}
