import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { initRepository } from '../../engine/operations/open.ts';
import { backendFor, readPassword, repoArgs, repoLocation } from './options.ts';
import { fromRepoArgs, openFrom } from './from-options.ts';
import { printJSON } from '../output.ts';
import { UsageError } from '../run.ts';

export default defineCommand({
  meta: { name: 'init', description: 'Create a new encrypted repository (restic format version 2)' },
  args: {
    ...repoArgs,
    'copy-chunker-params': {
      type: 'boolean',
      description: "chunk with the --from-repo repository's polynomial, so copies between the two deduplicate",
      default: false,
    },
    ...fromRepoArgs,
  },
  async run({ args }) {
    if (!args['copy-chunker-params'] && args['from-repo'] !== undefined)
      throw new UsageError('--from-repo is only read with --copy-chunker-params');
    const backend = backendFor(args);
    const polynomial = args['copy-chunker-params'] ? await sourcePolynomial(args) : undefined;
    const repo = await initRepository(backend, await readPassword(args), { polynomial });
    if (args.json) printJSON({ message_type: 'initialized', id: repo.config.id, repository: repoLocation(args) });
    else consola.success(`created repository ${repo.config.id.slice(0, 10)} at ${repoLocation(args)}`);
    await repo.close();
  },
});

async function sourcePolynomial(args: Parameters<typeof openFrom>[0]): Promise<bigint> {
  const source = await openFrom(args);
  await source.close();
  return source.config.chunkerPolynomial;
}
