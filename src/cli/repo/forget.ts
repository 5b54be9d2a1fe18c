import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { forget } from '../../engine/operations/forget.ts';
import { resolveSnapshotID } from '../../engine/operations/snapshots.ts';
import { printJSON } from '../output.ts';
import { UsageError } from '../run.ts';
import { openRepo, repoArgs } from './options.ts';
import { short } from './common.ts';
import { lockArgs, locking } from './locking.ts';
import { reportPrune, reportRetained } from './prune.ts';

export default defineCommand({
  meta: {
    name: 'forget',
    description: 'Remove snapshots (their data stays until prune; --prune does both; takes the exclusive lock)',
  },
  args: {
    ...repoArgs,
    ...lockArgs,
    snapshots: { type: 'positional', description: 'snapshot ids or id prefixes', required: false, valueHint: 'ID...' },
    prune: { type: 'boolean', description: 'prune unreferenced data afterwards', default: false },
  },
  async run({ args }) {
    if (args._.length === 0) throw new UsageError('name at least one snapshot id to forget');
    const lock = locking(args);
    const repo = await openRepo(args);
    // the prefixes resolve among the snapshots listed under the exclusive lock
    const choice = (snapshots: { id: string }[]) =>
      args._.map((prefix) =>
        resolveSnapshotID(
          snapshots.map((e) => e.id),
          prefix,
        ),
      );
    const { removed, retained, pruned } = await forget(repo, choice, { ...lock, prune: args.prune ? {} : undefined });
    if (args.json) printJSON({ message_type: 'summary', removed, retained, prune: pruned });
    else {
      consola.success(
        `removed ${removed.length} snapshot${removed.length === 1 ? '' : 's'}: ${removed.map(short).join(', ')}`,
      );
      reportRetained(retained);
      if (pruned) reportPrune(pruned);
    }
    await repo.close();
  },
});
