import { hostname as osHostname } from 'node:os';
import { resolve } from 'node:path';
import { defineCommand } from 'citty';
import { consola } from '../console.ts';
import { startBackupAhead } from '../../engine/operations/ahead.ts';
import type { BlockRead } from '../../engine/operations/blocks.ts';
import { findLatest, selectSnapshot, type SnapshotEntry } from '../../engine/operations/snapshots.ts';
import { formatBytes, formatDuration, printJSON, progressReporter } from '../output.ts';
import { UsageError } from '../run.ts';
import { openRepo, repoArgs } from './options.ts';
import { list, repeated } from './common.ts';
import { changedRangesOption } from './changed-ranges.ts';
import { lockArgs, locking } from './locking.ts';
import { packSizeArgs, parsePackSize } from './pack-size.ts';

export default defineCommand({
  meta: {
    name: 'backup',
    description: 'Back up files and directories (or one device/image with --stream) into a new snapshot',
  },
  args: {
    ...repoArgs,
    ...lockArgs,
    paths: {
      type: 'positional',
      description: 'files or directories to back up',
      required: false,
      valueHint: 'PATH...',
    },
    tag: { type: 'string', description: 'tag the snapshot (repeatable, or comma-separated)' },
    host: { type: 'string', description: 'hostname recorded in the snapshot (default: this machine)' },
    parent: {
      type: 'string',
      description:
        'snapshot to compare against: an id, "latest" (default: latest with the same paths and host), or "none"',
    },
    xattrs: { type: 'boolean', description: 'record extended attributes', default: false },
    stream: {
      type: 'string',
      description: 'back up the single PATH (a block device, image or pipe) as one file with this name',
      valueHint: 'NAME',
    },
    'changed-ranges': {
      type: 'string',
      description:
        'with --stream: a JSON file of the byte ranges changed since the parent snapshot, [{"offset": N, "length": N}, ...] sorted, as changed-block tracking reports them; only those are read',
      valueHint: 'FILE',
    },
    ...packSizeArgs,
  },
  async run({ args, rawArgs }) {
    const paths = args._.map((p) => resolve(p));
    if (paths.length === 0) throw new UsageError('nothing to back up: name at least one PATH');
    if (args.stream !== undefined && paths.length !== 1) throw new UsageError('--stream backs up exactly one PATH');
    const packSize = parsePackSize(args['pack-size']);
    // checked before the repository is opened: a bad list writes nothing
    const { readsLittle, ...changed } = await changedRangesOption(
      args['changed-ranges'],
      args.stream,
      args.parent,
      paths[0],
    );
    const lock = locking(args);
    // the backup engine's modules load, and its first thread starts, while the key derives on the thread pool; a
    // read of a few changed ranges runs on this thread, and a thread started for it would be CPU time for nothing
    if (!readsLittle) startBackupAhead();
    const [repo, { backup }] = await Promise.all([openRepo(args), import('../../engine/operations/backup.ts')]);
    const hostname = args.host ?? undefined;
    const tags = list(repeated(rawArgs, 'tag'));
    const parent =
      args.parent === 'none'
        ? undefined
        : parentChoice(args.parent, args.stream ? [`/${args.stream}`] : paths, hostname ?? osHostname());
    const progress = progressReporter(args.json === true);
    const started = Date.now();
    const result = await backup(repo, {
      ...lock,
      paths,
      tags,
      hostname,
      parent,
      stream: args.stream ? { name: args.stream, ...changed } : undefined,
      xattrs: args.xattrs,
      onWarning: (m) => consola.warn(m),
      writer: packSize === undefined ? undefined : { packSize },
      onProgress: args.json ? undefined : (p) => progress.update(p),
    });
    progress.done();
    const s = result.snapshot.summary!;
    if (args.json) {
      printJSON({
        message_type: 'summary',
        snapshot_id: result.snapshotID,
        parent: result.snapshot.parent,
        ...snakeSummary(s),
        // what this run uploaded, headers included, and what it took over from an interrupted run
        packs_written: result.stats.packs,
        pack_bytes_written: result.stats.packBytes,
        packs_adopted: result.adopted.packs,
        ...(result.archive.blockRead ? { block_read: snakeRead(result.archive.blockRead) } : {}),
        total_duration: (Date.now() - started) / 1000,
      });
    } else {
      consola.log(`Files: ${s.filesNew} new, ${s.filesChanged} changed, ${s.filesUnmodified} unmodified`);
      consola.log(`Dirs:  ${s.dirsNew} new, ${s.dirsChanged} changed, ${s.dirsUnmodified} unmodified`);
      consola.log(`Added to the repository: ${formatBytes(s.dataAdded)} (${formatBytes(s.dataAddedPacked)} stored)`);
      const read = result.archive.blockRead;
      if (read) consola.log(`Read ${readWhat[read.mode]}: ${formatBytes(read.bytesRead)} of ${formatBytes(read.size)}`);
      if (read?.reason) consola.warn(read.reason);
      consola.log(
        `processed ${s.totalFilesProcessed} files, ${formatBytes(s.totalBytesProcessed)} in ${formatDuration(Date.now() - started)}`,
      );
      consola.success(`snapshot ${result.snapshotID.slice(0, 8)} saved`);
    }
    await repo.close();
  },
});

const readWhat = { changed: 'the changed ranges', allocated: 'the allocated ranges', full: 'the whole device' };

function snakeRead(read: BlockRead): Record<string, unknown> {
  return {
    mode: read.mode,
    bytes_read: read.bytesRead,
    size: read.size,
    ...(read.reason ? { reason: read.reason } : {}),
  };
}

/** The snapshot named by --parent, or else the latest of the same paths and host, among those listed under the lock. */
function parentChoice(
  spec: string | undefined,
  paths: string[],
  hostname: string,
): (snapshots: SnapshotEntry[]) => SnapshotEntry | undefined {
  return (snapshots) => {
    if (spec !== undefined) return selectSnapshot(snapshots, spec);
    return snapshots.length === 0 ? undefined : tryLatest(() => findLatest(snapshots, { paths, hosts: [hostname] }));
  };
}

function tryLatest<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

function snakeSummary(s: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'backupStart' || k === 'backupEnd') continue;
    out[k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)] = v;
  }
  return out;
}
