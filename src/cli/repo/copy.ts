// `ferry repo copy`: restic's copy, with restic's flags. --repo (or FERRY_REPOSITORY) is the destination, as for
// every repo command; --from-repo and --from-password-file (or FERRY_FROM_REPOSITORY, FERRY_FROM_PASSWORD) name
// the source, whose password is never taken from the destination's.
import { isAbsolute } from 'node:path';
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import type { CopiedSnapshot, CopyResult, SnapshotFilter } from '../../engine/operations/copy.ts';
import { formatBytes, formatDuration, printJSON, progressReporter } from '../output.ts';
import { UsageError } from '../run.ts';
import { openRepo, repoArgs, repoLocation } from './options.ts';
import { fromLocation, fromRepoArgs, openFrom } from './from-options.ts';
import { list, repeated, short } from './common.ts';
import { lockArgs, locking } from './locking.ts';
import { packSizeArgs, parsePackSize } from './pack-size.ts';

export default defineCommand({
  meta: {
    name: 'copy',
    description: 'Copy snapshots from another repository (--from-repo) into this one; copies made before are skipped',
  },
  args: {
    ...repoArgs,
    ...lockArgs,
    snapshots: {
      type: 'positional',
      description: 'snapshot ids, id prefixes or "latest" (default: every snapshot the filters match)',
      required: false,
      valueHint: 'ID...',
    },
    ...fromRepoArgs,
    ...packSizeArgs,
    host: { type: 'string', description: 'only snapshots of this host, when no id is given (repeatable)' },
    tag: {
      type: 'string',
      description: 'only snapshots with all these tags (a,b), when no id is given (repeatable: any of the lists)',
    },
    path: {
      type: 'string',
      description: 'only snapshots including this absolute path, when no id is given (repeatable)',
    },
  },
  async run({ args, rawArgs }) {
    const filter = snapshotFilter(rawArgs);
    const from = fromLocation(args);
    if (from === repoLocation(args))
      throw new UsageError(`--from-repo and --repo both name ${from}: a copy needs two repositories`);
    const lock = locking(args);
    const packSize = parsePackSize(args['pack-size']);
    const source = await openFrom(args);
    const [destination, { copy }] = await Promise.all([openRepo(args), import('../../engine/operations/copy.ts')]);
    const progress = progressReporter(args.json === true);
    const started = Date.now();
    const result = await copy(source, destination, {
      ...lock,
      snapshots: args._,
      filter,
      writer: packSize === undefined ? undefined : { packSize },
      onProgress: args.json ? undefined : (p) => progress.update(p, `${p.snapshotsDone}/${p.snapshotsTotal} snapshots`),
      onSnapshot: args.json ? undefined : (s) => report(s),
    });
    progress.done();
    if (!result.samePolynomial) {
      consola.warn(
        "the repositories chunk with different polynomials: copied files keep the source's chunks and do not deduplicate against data the destination chunked itself",
      );
    }
    if (args.json) printJSON(summary(result, Date.now() - started));
    else {
      const copied = result.snapshots.filter((s) => !s.skipped).length;
      consola.success(
        `copied ${copied} snapshot${copied === 1 ? '' : 's'} (${result.snapshots.length - copied} already there): ` +
          `${result.stats.dataBlobs + result.stats.treeBlobs} new blobs, ${formatBytes(result.stats.packBytes)} stored in ${formatDuration(Date.now() - started)}`,
      );
    }
    await Promise.all([source.close(), destination.close()]);
  },
});

function report(s: CopiedSnapshot): void {
  if (s.skipped) consola.info(`snapshot ${short(s.source)}: already copied to ${short(s.copy)}, skipped`);
  else consola.info(`snapshot ${short(s.source)}: copied to ${short(s.copy)}`);
}

/** restic's filter flags, each repeatable; each --tag is one list of tags a snapshot must all have. */
function snapshotFilter(rawArgs: readonly string[]): SnapshotFilter {
  const paths = list(repeated(rawArgs, 'path'));
  const relative = paths.find((p) => !isAbsolute(p));
  if (relative !== undefined)
    throw new UsageError(`--path "${relative}" must be an absolute path, as recorded in snapshots`);
  const tags = repeated(rawArgs, 'tag')
    .map((t) => list(t))
    .filter((l) => l.length > 0);
  return { hosts: list(repeated(rawArgs, 'host')), tags, paths };
}

function summary(r: CopyResult, ms: number): Record<string, unknown> {
  return {
    message_type: 'summary',
    snapshots: r.snapshots.map((s) => ({ source: s.source, copy: s.copy, skipped: s.skipped })),
    data_blobs: r.stats.dataBlobs,
    tree_blobs: r.stats.treeBlobs,
    data_added: r.stats.dataAdded,
    data_added_packed: r.stats.dataAddedPacked,
    packs_written: r.stats.packs,
    pack_bytes_written: r.stats.packBytes,
    packs_adopted: r.adoptedPacks,
    same_polynomial: r.samePolynomial,
    total_duration: ms / 1000,
  };
}
