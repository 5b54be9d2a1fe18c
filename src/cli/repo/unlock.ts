import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { unlock } from '../../engine/operations/unlock.ts';
import { printJSON } from '../output.ts';
import { openRepo, repoArgs } from './options.ts';
import { short } from './common.ts';

export default defineCommand({
  meta: { name: 'unlock', description: 'Remove stale locks left by processes that died' },
  args: { ...repoArgs },
  async run({ args }) {
    const repo = await openRepo(args);
    const { stale: removed } = await unlock(repo);
    if (args.json) printJSON({ message_type: 'summary', removed });
    else if (removed.length === 0) consola.info('no stale locks');
    else for (const r of removed) consola.success(`removed lock ${short(r.id)}: ${r.reason}`);
    await repo.close();
  },
});
