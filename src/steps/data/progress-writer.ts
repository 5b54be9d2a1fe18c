// status.progress during a transfer: the engine reports many times a second; this writes the latest numbers
// every few seconds with a merge patch of the status (no resourceVersion: progress is the one field only the
// transfer writes, and it must not collide with phase changes). A write still in flight is never overlapped,
// and a failed write is only logged: progress is a courtesy, the data is the job. Every progress written carries
// `percent`, since the Progress% printer column reads a field and cannot divide.
import type { FerryResource, Progress } from '../../shared/api/types.ts';
import { keyOf, type KubeObject } from '../../shared/kube/kube.ts';
import type { StepContext } from '../context.ts';

/**
 * Progress with its whole percentage (rounded down, so 100 means done); a total below the bytes done is raised. While
 * the total is still growing (a backup's scanner walks only a little ahead of the upload) the percentage stays below
 * 100, since the work is not done however close the two numbers are.
 */
export function progressOf(bytesDone: number, totalBytes: number, totalFinal = true): Progress {
  const total = Math.max(totalBytes, bytesDone);
  const percent = total === 0 ? 0 : Math.floor((bytesDone / total) * 100);
  return { bytesDone, totalBytes: total, percent: totalFinal ? percent : Math.min(99, percent) };
}

/** A finished transfer: 100% even when there was nothing to move. */
export function finishedProgress(bytes: number): Progress {
  return { bytesDone: bytes, totalBytes: bytes, percent: 100 };
}

export class ProgressWriter {
  readonly #ctx: StepContext;
  readonly #key: ReturnType<typeof keyOf>;
  #latest: Progress = progressOf(0, 0);
  #written = '';
  #inFlight: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(ctx: StepContext, r: FerryResource) {
    this.#ctx = ctx;
    this.#key = keyOf(r as FerryResource & KubeObject);
  }

  start(): void {
    this.#timer = setInterval(() => void this.#write(), this.#ctx.settings.progressMs);
    this.#timer.unref();
  }

  update(bytesDone: number, totalBytes: number, totalFinal = true): void {
    this.#latest = progressOf(bytesDone, totalBytes, totalFinal);
  }

  /** Stops the timer and waits for a write in flight. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#inFlight;
  }

  #write(): Promise<void> | undefined {
    const text = JSON.stringify(this.#latest);
    if (this.#inFlight || text === this.#written) return;
    const progress = this.#latest;
    this.#inFlight = this.#ctx.kube
      .patch(this.#key, { status: { progress } }, { status: true })
      .then(() => {
        this.#written = text;
      })
      .catch((err: Error) => this.#ctx.log.warn('could not write the progress', { error: err.message }))
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }
}
