// Cancel and deletion reach the step while it waits on a hook or a snapshot: a watch (by polling, like every wait
// of the steps) reads the AppBackup and aborts a signal once spec.cancel is set or a deletion started, so the hook
// is killed and the wait stops there instead of at its timeout.
import type { AppBackupContext, AppBackupObject, AppRef } from './context.ts';
import { readAppBackup } from './context.ts';

/** spec.cancel, or a deletion: the AppBackup is to stop, undo what it holds and end Canceled. */
export function cancelRequested(ab: AppBackupObject | undefined): boolean {
  return !ab || Boolean(ab.spec.cancel) || Boolean(ab.metadata.deletionTimestamp);
}

export function cancelReason(ab: AppBackupObject | undefined): string {
  return !ab || ab.metadata.deletionTimestamp ? 'the AppBackup is being deleted' : 'spec.cancel is set';
}

export interface CancelWatch {
  /** aborted once a cancel or deletion was seen */
  signal: AbortSignal;
  stop(): void;
}

export function watchCancel(ctx: AppBackupContext, ref: AppRef): CancelWatch {
  const canceled = new AbortController();
  const stopped = new AbortController();
  const poll = async (): Promise<void> => {
    while (!stopped.signal.aborted && !ctx.signal.aborted) {
      await ctx.sleep(ctx.pollMs, AbortSignal.any([stopped.signal, ctx.signal]));
      if (stopped.signal.aborted) return;
      const ab = await readAppBackup(ctx, ref);
      if (cancelRequested(ab)) {
        canceled.abort(new Error(cancelReason(ab)));
        return;
      }
    }
  };
  poll().catch((err: unknown) => {
    // a sleep cut short by stop() or the pod's end is the normal way out; anything else is only logged, the
    // stages check cancel again between them
    if (!stopped.signal.aborted && !ctx.signal.aborted)
      ctx.log.warn('the cancel watch stopped', { error: (err as Error).message });
  });
  return { signal: canceled.signal, stop: () => stopped.abort() };
}
