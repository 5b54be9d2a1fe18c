import { resolve } from 'node:path';
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { startRestoreAhead } from '../../engine/operations/ahead.ts';
import { formatBytes, formatDuration, printJSON, progressReporter } from '../output.ts';
import { UsageError } from '../run.ts';
import { openRepo, repoArgs } from './options.ts';
import { snapshotArg, short } from './common.ts';
import { lockArgs, locking } from './locking.ts';

export default defineCommand({
  meta: {
    name: 'restore',
    description:
      'Restore a snapshot (or a path in it: ID:/path) into a directory, or a --stream snapshot into a file or device',
  },
  args: {
    ...repoArgs,
    ...lockArgs,
    snapshot: {
      type: 'positional',
      description: 'snapshot id prefix or "latest", optionally followed by :/path/inside',
      required: true,
      valueHint: 'SNAPSHOT[:PATH]',
    },
    xattrs: { type: 'boolean', description: 'restore recorded extended attributes', default: false },
    target: {
      type: 'string',
      alias: 't',
      description: 'directory to restore into (created if missing); for a single file, the file or device to write',
      valueHint: 'DIR',
    },
  },
  async run({ args }) {
    if (!args.target) throw new UsageError('no --target given: name the directory to restore into');
    const { spec, subpath } = snapshotArg(args.snapshot);
    const lock = locking(args);
    // the restore engine's modules load, and its small-file thread starts, while the key derives
    startRestoreAhead('directory');
    const [repo, { restore }] = await Promise.all([openRepo(args), import('../../engine/operations/restore.ts')]);
    const progress = progressReporter(args.json === true);
    const started = Date.now();
    const result = await restore(repo, {
      ...lock,
      snapshot: spec,
      target: { kind: 'directory', path: resolve(args.target), subpath, xattrs: args.xattrs },
      onProgress: (p) => progress.update(p),
    });
    const entry = result.snapshot;
    progress.done();
    if (args.json)
      printJSON({
        message_type: 'summary',
        snapshot_id: entry.id,
        files_restored: result.filesDone,
        bytes_restored: result.bytesDone,
        total_duration: (Date.now() - started) / 1000,
      });
    else
      consola.success(
        `restored snapshot ${short(entry.id)}${subpath === '/' ? '' : `:${subpath}`} to ${args.target}: ${result.filesDone} files, ${formatBytes(result.bytesDone)} in ${formatDuration(Date.now() - started)}`,
      );
    await repo.close();
  },
});
