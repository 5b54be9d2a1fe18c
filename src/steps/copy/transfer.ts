// The copy itself: the DataUpload's one snapshot from the source repository into the destination's, under the
// step's locking (a shared lock on each, waiting for an exclusive holder as long as the step's lock wait), with
// status.progress written as it goes and stopped by a cancel or deletion of the DataCopy. Resumable: packs an
// attempt stored before it died are adopted, a snapshot already in the destination is found, not sent again.
// On an object-lock destination the retention of what the kept snapshots need is extended afterwards.
import { copy } from '../../engine/operations/copy.ts';
import { extendRetention } from '../../engine/operations/extend-retention.ts';
import type { CopyStats } from '../../shared/api/copy.ts';
import { stepLocking } from '../data/repository.ts';
import type { CopyContext, DataCopyObject } from './context.ts';
import { writeCopyStatus } from './context.ts';
import type { CopyPlan } from './resolve.ts';
import { openLocationRepository, type OpenedRepository } from './repositories.ts';
import type { Repository } from '../../engine/operations/open.ts';

export interface Copied {
  snapshotID: string;
  stats: CopyStats;
  /** the destination held the snapshot already */
  skipped: boolean;
  /** files whose retention was extended, on an object-lock destination */
  retentionExtended?: number;
}

export async function copySnapshot(
  ctx: CopyContext,
  dc: DataCopyObject,
  plan: CopyPlan,
  signal: AbortSignal,
): Promise<Copied> {
  const ns = dc.metadata.namespace ?? '';
  const source = await openLocationRepository(ctx, plan.sourceLocation, ns, 'read');
  try {
    const destination = await openLocationRepository(ctx, dc.spec.backupStorageLocation, ns, 'copy');
    try {
      return await copyBetween(ctx, dc, plan, { source: source.repo, destination }, signal);
    } finally {
      await destination.close();
    }
  } finally {
    await source.close();
  }
}

async function copyBetween(
  ctx: CopyContext,
  dc: DataCopyObject,
  plan: CopyPlan,
  repos: { source: Repository; destination: OpenedRepository },
  signal: AbortSignal,
): Promise<Copied> {
  const started = ctx.now().getTime();
  const progress = progressWriter(ctx, dc);
  const locking = stepLocking(ctx, signal);
  let result;
  try {
    result = await copy(repos.source, repos.destination.repo, {
      ...locking,
      snapshots: [plan.sourceSnapshotID],
      onProgress: (p) => progress.update(p.bytesDone, p.bytesTotal),
    });
  } finally {
    // no progress write may land after the status this attempt ends with
    await progress.done();
  }
  const [copied] = result.snapshots;
  if (!copied) throw new Error(`the source repository returned no copy of snapshot ${plan.sourceSnapshotID}`);
  const retention = repos.destination.objectLock ? await extendRetention(repos.destination.repo, locking) : undefined;
  return {
    snapshotID: copied.copy,
    skipped: copied.skipped,
    retentionExtended: retention?.extended,
    stats: {
      blobs: result.stats.dataBlobs + result.stats.treeBlobs,
      bytesSent: result.stats.packBytes,
      durationSeconds: Math.round((ctx.now().getTime() - started) / 1000),
    },
  };
}

/** status.progress at most every progressMs; a failed write is logged (the copy goes on). */
function progressWriter(ctx: CopyContext, dc: DataCopyObject) {
  let last = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const write = (bytesDone: number, totalBytes: number): void => {
    last = Date.now();
    const percent = totalBytes > 0 ? Math.min(100, Math.floor((bytesDone * 100) / totalBytes)) : undefined;
    writing = writing
      .then(() =>
        writeCopyStatus(
          ctx,
          dc,
          (s) => {
            if (s.phase !== 'InProgress') return false;
            s.progress = { bytesDone, totalBytes, ...(percent === undefined ? {} : { percent }) };
          },
          { mirror: false },
        ),
      )
      .catch((err: Error) => ctx.log.warn('could not write the progress', { error: err.message }));
  };
  return {
    update(bytesDone: number, totalBytes: number): void {
      if (Date.now() - last >= ctx.settings.progressMs) write(bytesDone, totalBytes);
    },
    done: () => writing,
  };
}
