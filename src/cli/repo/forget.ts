import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { forget } from '../../engine/operations/forget.ts';
import { listSnapshots } from '../../engine/repository/snapshots.ts';
import { resolveSnapshotID } from '../../engine/snapshot/select.ts';
import { printJSON } from '../output.ts';
import { UsageError } from '../run.ts';
import { openRepo, repoArgs } from './options.ts';
import { short } from './common.ts';
import { lockArgs, locking } from './locking.ts';
import { reportPrune } from './prune.ts';

export default defineCommand({
  meta: { name: 'forget', description: 'Remove snapshots (their data stays until prune; --prune does both; takes the exclusive lock)' },
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
    const ids = (await listSnapshots(repo)).map((e) => e.id);
    const chosen = args._.map((prefix) => resolveSnapshotID(ids, prefix));
    const pruned = await forget(repo, chosen, { ...lock, prune: args.prune ? {} : undefined });
    if (args.json) printJSON({ message_type: 'summary', removed: chosen, prune: pruned });
    else {
      consola.success(`removed ${chosen.length} snapshot${chosen.length === 1 ? '' : 's'}: ${chosen.map(short).join(', ')}`);
      if (pruned) reportPrune(pruned);
    }
    await repo.close();
  },
});
