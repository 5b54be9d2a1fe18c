import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { check } from '../../engine/operations/check.ts';
import { printJSON } from '../output.ts';
import { UsageError } from '../run.ts';
import { openRepo, repoArgs } from './options.ts';
import { lockArgs, locking } from './locking.ts';

export default defineCommand({
  meta: {
    name: 'check',
    description: 'Check the repository structure and, with --read-data, every stored byte (takes the exclusive lock)',
  },
  args: {
    ...repoArgs,
    ...lockArgs,
    'read-data': { type: 'boolean', description: 'read every pack and verify every blob', default: false },
    'read-data-subset': {
      type: 'string',
      description: 'read a random fraction of the packs, e.g. 10%',
      valueHint: 'N%',
    },
  },
  async run({ args }) {
    const subset = parseSubset(args['read-data-subset']);
    const lock = locking(args);
    const repo = await openRepo(args);
    const r = await check(repo, {
      ...lock,
      readData: args['read-data'] || subset !== undefined,
      readDataSubset: subset,
    });
    if (args.json) {
      printJSON({
        message_type: 'summary',
        errors: r.errors,
        orphaned_packs: r.orphanedPacks,
        snapshots: r.snapshots,
        trees: r.trees,
        packs_read: r.packsRead,
        blobs_read: r.blobsRead,
      });
    } else {
      for (const e of r.errors) consola.error(e);
      if (r.orphanedPacks.length > 0)
        consola.info(
          `${r.orphanedPacks.length} packs are not referenced by any index (left by an interrupted backup); the next backup reuses them and prune removes them`,
        );
      if (r.errors.length === 0)
        consola.success(
          `no errors were found (${r.snapshots} snapshots, ${r.trees} trees${r.packsRead ? `, ${r.packsRead} packs and ${r.blobsRead} blobs read` : ''})`,
        );
    }
    await repo.close();
    if (r.errors.length > 0)
      throw new Error(`the check found ${r.errors.length} error${r.errors.length === 1 ? '' : 's'} in the repository`);
  },
});

function parseSubset(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const m = /^(\d+(?:\.\d+)?)%$/.exec(v);
  const n = m ? Number(m[1]) / 100 : NaN;
  if (!(n > 0 && n <= 1))
    throw new UsageError(`--read-data-subset "${v}" must be a percentage between 0% and 100%, like 10%`);
  return n;
}
