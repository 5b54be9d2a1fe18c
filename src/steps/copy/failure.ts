// A failed attempt: the DataCopy says why (condition Copied=False, status.message) and when the next attempt starts
// (status.nextAttemptTime: 1 minute after the first failure, doubling up to 1 hour, for ever: a site that is down
// for a day is copied to once it is back); an Event CopyFailed goes on the DataCopy and on its DataUpload, whose own
// phase stays as it is. A copy that can never work ends Failed instead, and is not tried again.
import { retryDelayMs } from '../../shared/copy/step.ts';
import { rfc3339, setCondition } from '../../shared/kube/conditions.ts';
import { bounded } from '../app/context.ts';
import type { Outcome } from '../context.ts';
import type { CopyContext, DataCopyObject } from './context.ts';
import { copyEvent, writeCopyStatus } from './context.ts';
import type { UploadObject } from './resolve.ts';

export async function recordCopyFailure(
  ctx: CopyContext,
  dc: DataCopyObject,
  upload: UploadObject | undefined,
  cause: string,
  permanent: boolean,
): Promise<Outcome> {
  const now = ctx.now();
  const message = bounded(permanent ? `${cause}; the copy is not tried again` : cause);
  const written = await writeCopyStatus(ctx, dc, (s) => {
    if (permanent) {
      s.phase = 'Failed';
      s.completionTimestamp = rfc3339(now);
      delete s.nextAttemptTime;
    } else {
      s.phase = 'InProgress';
      s.nextAttemptTime = rfc3339(new Date(now.getTime() + retryDelayMs(s.attempts ?? 1)));
    }
    delete s.progress;
    s.message = message;
    s.conditions = setCondition(
      s.conditions,
      { type: 'Copied', status: 'False', reason: permanent ? 'CannotCopy' : 'CopyFailed', message },
      now,
    );
  });
  const retry = written.status?.nextAttemptTime ? `; next attempt at ${written.status.nextAttemptTime}` : '';
  const note = bounded(`copy to ${dc.spec.backupStorageLocation} failed: ${message}${retry}`, 1000);
  await copyEvent(ctx, written, { type: 'Warning', reason: 'CopyFailed', note });
  if (upload)
    await copyEvent(ctx, upload, {
      type: 'Warning',
      reason: 'CopyFailed',
      note: `DataCopy ${dc.metadata.name}: ${note}`,
    });
  return { outcome: 'Failed', reason: note };
}
