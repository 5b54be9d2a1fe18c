import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { prune, type PruneResult, type Retained } from '../../engine/operations/prune.ts';
import { short } from './common.ts';
import { formatBytes, printJSON } from '../output.ts';
import { UsageError } from '../run.ts';
import { openRepo, repoArgs } from './options.ts';
import { lockArgs, locking } from './locking.ts';

export default defineCommand({
  meta: {
    name: 'prune',
    description: 'Delete data no snapshot uses and repack mostly-unused packs (takes the exclusive lock)',
  },
  args: {
    ...repoArgs,
    ...lockArgs,
    'dry-run': { type: 'boolean', description: 'only say what would be done', default: false },
    'repack-unused': {
      type: 'string',
      description: 'repack a pack once this share of it is unused (default 50%)',
      valueHint: 'N%',
    },
  },
  async run({ args }) {
    const fraction =
      args['repack-unused'] === undefined
        ? undefined
        : Number(/^(\d+)%$/.exec(args['repack-unused'])?.[1] ?? NaN) / 100;
    if (fraction !== undefined && !(fraction > 0 && fraction <= 1))
      throw new UsageError(`--repack-unused "${args['repack-unused']}" must be a percentage from 1% to 100%`);
    const lock = locking(args);
    const repo = await openRepo(args);
    const r = await prune(repo, { ...lock, dryRun: args['dry-run'], repackUnusedFraction: fraction });
    if (args.json) printJSON({ message_type: 'summary', ...r });
    else reportPrune(r, args['dry-run']);
    await repo.close();
  },
});

export function reportPrune(r: PruneResult, dryRun = false): void {
  const p = r.plan;
  consola.log(
    `${p.remove.length} unused packs, ${p.repack.length} packs to repack (${formatBytes(p.repackBytes)} of used data), ${formatBytes(p.unusedBytes)} unused`,
  );
  if (dryRun) consola.info('dry run: nothing was changed');
  else
    consola.success(
      `deleted ${r.packsDeleted} packs (${formatBytes(r.bytesFreed)} freed), wrote ${r.packsWritten} new packs and ${r.indexFilesRewritten} index files`,
    );
  reportRetained(r.retained);
}

/** Files prune or forget left in place because S3 Object Lock still retains them. */
export function reportRetained(retained: readonly Retained[]): void {
  if (retained.length === 0) return;
  const dates = retained.flatMap((f) => (f.until ? [f.until.getTime()] : []));
  const held = retained.length - dates.length;
  const ends = [
    ...(dates.length > 0 ? [`the last until ${new Date(Math.max(...dates)).toISOString()}`] : []),
    ...(held > 0 ? [`${held} under a legal hold until it is lifted`] : []),
  ];
  consola.warn(
    `kept ${retained.length} file${retained.length === 1 ? '' : 's'} under S3 Object Lock retention (${retained.map((f) => `${f.type} ${short(f.name)}`).join(', ')}), ${ends.join(', ')}: a later run frees them once it ends`,
  );
}
