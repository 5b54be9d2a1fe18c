// What a DataCopy's copy step and the dispatcher share: the finalizer held while the copy's snapshot may still be
// forgotten in the destination, the step's command and template, the name of each attempt's Job, and the wait
// before the next attempt after a failure (1 minute, doubling up to 1 hour, for ever: a site down for a day is
// copied to once it is back).
export const copyFinalizer = 'ferry.dev/copy';

/** The step command, its template CronJob (jobs/copy.yaml) and its ServiceAccount. */
export const copyStepName = 'copy';
export const copyTemplateName = 'ferry-step-copy';

/** Deterministic: the same DataCopy and attempt always give the same name (at most 63 characters). */
export function copyJobName(uid: string, attempt: number): string {
  return `ferry-copy-${uid.replaceAll('-', '').slice(0, 16)}-a${attempt}`;
}

const firstDelayMs = 60_000;
const maxDelayMs = 3600_000;

/** The wait after the `attempts`-th failed attempt. */
export function retryDelayMs(attempts: number): number {
  return Math.min(maxDelayMs, firstDelayMs * 2 ** Math.max(0, Math.min(attempts - 1, 20)));
}
