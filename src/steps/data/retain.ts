// After a step wrote a snapshot into an Object Lock location, every file the snapshots kept there need has its
// retention extended to now + the location's period: the data a new backup deduplicated against an old one is held
// as long as the new backup, not only as long as the old one's retention. A location without a policy has nothing
// to extend.
import { extendRetention } from '../../engine/operations/extend-retention.ts';
import type { Repository } from '../../engine/operations/open.ts';
import type { StepEnvironment } from '../context.ts';
import { stepLocking } from './repository.ts';

/** The files whose retention was extended, or undefined when the repository has no Object Lock policy. */
export async function extendRetained(
  ctx: StepEnvironment,
  repo: Repository,
  signal: AbortSignal,
): Promise<number | undefined> {
  if (!repo.backend.retention) return undefined;
  const r = await extendRetention(repo, stepLocking(ctx, signal));
  ctx.log.info('extended the Object Lock retention of what the kept snapshots need', {
    files: r.files,
    extended: r.extended,
    snapshots: r.snapshots,
  });
  return r.extended;
}
