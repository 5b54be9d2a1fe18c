// Watching a resource during a long transfer: polls it every second or so and aborts the transfer's signal when
// a cancel is requested, the resource is being deleted or is gone, or it left the transfer's phases (the sweep
// marked it Failed). Polling keeps it simple and survives apiserver restarts; one GET a second is cheap. The copy
// step watches its DataCopy the same way.
import type { ObjectMeta } from '../../shared/api/types.ts';
import { keyOf, type KubeObject } from '../../shared/kube/kube.ts';
import type { StepContext } from '../context.ts';

/** What the watch reads of a resource: a DataUpload, a DataDownload or a DataCopy. */
export interface Watched {
  kind: string;
  metadata: ObjectMeta;
  spec: { cancel?: boolean };
  status?: { phase?: string };
}

export type StopReason = 'cancel' | 'deleting' | 'gone' | 'moved';

export class CancelWatch {
  readonly #ctx: Pick<StepContext, 'kube' | 'log' | 'settings'>;
  readonly #r: Watched;
  readonly #phases: readonly string[];
  readonly #controller = new AbortController();
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  reason: StopReason | undefined;

  constructor(ctx: Pick<StepContext, 'kube' | 'log' | 'settings'>, r: Watched, phases: readonly string[]) {
    this.#ctx = ctx;
    this.#r = r;
    this.#phases = phases;
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  start(): void {
    this.#timer = setInterval(() => void this.poll(), Math.min(this.#ctx.settings.pollMs, 1000));
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  /** One look at the resource (the timer calls it; tests may too). */
  async poll(): Promise<void> {
    if (this.#polling || this.reason) return;
    this.#polling = true;
    try {
      const fresh = await this.#ctx.kube.get<Watched & KubeObject>(keyOf(this.#r as Watched & KubeObject));
      const why = stopReason(fresh, this.#r, this.#phases);
      if (why) this.#abort(why);
    } catch (err) {
      this.#ctx.log.debug('could not look for a cancel request', { error: (err as Error).message });
    } finally {
      this.#polling = false;
    }
  }

  #abort(why: StopReason): void {
    this.reason = why;
    this.#ctx.log.info(`stopping the transfer: ${messages[why]}`);
    const err = new Error(`the transfer stopped: ${messages[why]}`);
    err.name = 'AbortError';
    this.#controller.abort(err);
  }
}

const messages: Record<StopReason, string> = {
  cancel: 'cancel was requested',
  deleting: 'the resource is being deleted',
  gone: 'the resource no longer exists',
  moved: 'the resource left the transfer phases',
};

export function stopReason(fresh: Watched | undefined, r: Watched, phases: readonly string[]): StopReason | undefined {
  if (!fresh || fresh.metadata.uid !== r.metadata.uid) return 'gone';
  if (fresh.spec.cancel === true) return 'cancel';
  if (fresh.metadata.deletionTimestamp) return 'deleting';
  if (!phases.includes(fresh.status?.phase ?? 'New')) return 'moved';
  return undefined;
}
