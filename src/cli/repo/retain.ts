// `ferry repo retain`: extends the S3 Object Lock retention of every file the repository's snapshots need to
// now + the --object-lock period, so retention follows the backups kept; what only forgotten snapshots needed runs
// out, and a later prune frees it.
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { extendRetention } from '../../engine/operations/extend-retention.ts';
import { printJSON } from '../output.ts';
import { UsageError } from '../run.ts';
import { openRepo, repoArgs } from './options.ts';
import { lockArgs, locking } from './locking.ts';

export default defineCommand({
  meta: {
    name: 'retain',
    description: 'Extend the S3 Object Lock retention of everything the snapshots need (with --object-lock)',
  },
  args: { ...repoArgs, ...lockArgs },
  async run({ args }) {
    if (args['object-lock'] === undefined)
      throw new UsageError('retain extends retention to the --object-lock period: pass --object-lock MODE:PERIOD');
    const lock = locking(args);
    const repo = await openRepo(args);
    const r = await extendRetention(repo, lock);
    if (args.json) printJSON({ message_type: 'summary', ...r });
    else
      consola.success(
        `${r.snapshots} snapshots need ${r.files} files: retention of ${r.extended} extended, the others' ends later already`,
      );
    await repo.close();
  },
});
