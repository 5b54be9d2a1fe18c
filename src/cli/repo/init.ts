import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { initRepository } from '../../engine/operations/open.ts';
import { backendFor, readPassword, repoArgs, repoLocation } from './options.ts';
import { printJSON } from '../output.ts';

export default defineCommand({
  meta: { name: 'init', description: 'Create a new encrypted repository (restic format version 2)' },
  args: { ...repoArgs },
  async run({ args }) {
    const backend = backendFor(args);
    const repo = await initRepository(backend, await readPassword(args));
    if (args.json) printJSON({ message_type: 'initialized', id: repo.config.id, repository: repoLocation(args) });
    else consola.success(`created repository ${repo.config.id.slice(0, 10)} at ${repoLocation(args)}`);
    await repo.close();
  },
});
