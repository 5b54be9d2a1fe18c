// transfer (Prepared, InProgress): the data path, in the Job pod that mounts the exposed volume at
// /ferry/volume (filesystem) or /ferry/device (block). A backup writes one repository snapshot tagged with the
// namespace, PVC and DataUpload uid, with the last snapshot of the same PVC as its parent; a restore fills the
// restore volume from the snapshot. Progress goes to status every few seconds; a cancel stops it within about a
// second and leaves no snapshot; a crashed run is resumed by the next one (the engine adopts the packs already
// uploaded, and a snapshot the crashed run managed to save is taken as the result).
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { ChangeTracking, DataDownload, DataUpload, FerryResource, TransferStats } from '../../shared/api/types.ts';
import { deviceSize, type BlockRead } from '../../engine/operations/blocks.ts';
import { phasesOf } from '../../shared/api/phases.ts';
import { startBackupAhead, startRestoreAhead } from '../../engine/operations/ahead.ts';
import { backup } from '../../engine/operations/backup.ts';
import { forget } from '../../engine/operations/forget.ts';
import type { Repository } from '../../engine/operations/open.ts';
import { restore } from '../../engine/operations/restore.ts';
import type { SnapshotEntry } from '../../engine/operations/snapshots.ts';
import { blockChanges } from './block-changes.ts';
import { CancelWatch } from './cancel-watch.ts';
import type { Outcome, StepContext } from '../context.ts';
import { dataStep } from './description.ts';
import { exists } from './device.ts';
import { StepFailure } from './failure.ts';
import { finishedProgress, ProgressWriter, progressOf } from './progress-writer.ts';
import { openRepository, stepLocking } from './repository.ts';
import { extendRetained } from './retain.ts';
import { parentOf, snapshotsOf, snapshotTags } from './tags.ts';
import { transition } from './transition.ts';

interface Moved {
  snapshotID: string;
  parentSnapshotID?: string;
  /** how a block device was read */
  blockRead?: BlockRead;
  stats: TransferStats;
  note: string;
}

export async function transfer(ctx: StepContext, r: FerryResource): Promise<Outcome> {
  if (ctx.sweep) return { outcome: 'Skipped', reason: 'transfer runs only in the Job that mounts its volume.' };
  const resumed = r.status?.phase === 'InProgress';
  const current = resumed
    ? r
    : await transition(ctx, r, {
        to: 'InProgress',
        reason: 'TransferStarted',
        note: `Moving the data${ctx.settings.nodeName ? ` on node ${ctx.settings.nodeName}` : ''}.`,
        status: (s) => {
          if (ctx.settings.nodeName) s.node = ctx.settings.nodeName;
          s.startTimestamp ??= ctx.startedAt.toISOString();
          s.progress = progressOf(0, 0);
        },
      });
  const watch = new CancelWatch(ctx, current, phasesOf(current.kind, 'transfer'));
  const progress = new ProgressWriter(ctx, current);
  const signal = AbortSignal.any([ctx.signal, watch.signal]);
  // the first thread of a backup (or a restore's small-file thread) starts while the repository opens; a block
  // volume restores as one stream, with no small files. A block backup starts none ahead: the changed blocks it
  // reads are known only once the parent is, and a few of them are read on this thread (a thread would cost more
  // than the read); a full read starts its thread at the first bytes, 0.1-0.2 s of a read of seconds
  if (current.kind === 'DataDownload') startRestoreAhead((await exists(ctx.settings.devicePath)) ? 'device' : 'volume');
  else if (current.status?.volumeMode !== 'Block') startBackupAhead();
  const opened = await openRepository(ctx, current, current.kind === 'DataUpload');
  watch.start();
  progress.start();
  let moved: Moved;
  try {
    moved =
      current.kind === 'DataUpload'
        ? await backupVolume(ctx, current, opened.repo, signal, progress)
        : await restoreVolume(ctx, current, opened.repo, signal, progress, resumed);
    // a cancel that arrived while the last bytes were written still wins: nothing is kept
    if (watch.reason) signal.throwIfAborted();
    if (current.kind === 'DataUpload') await extendRetained(ctx, opened.repo, signal);
  } catch (err) {
    if (!watch.reason || ctx.signal.aborted) throw err;
    return stopped(ctx, current, opened.repo, watch);
  } finally {
    watch.stop();
    await progress.stop();
    await opened.close();
  }
  await transition(ctx, current, {
    to: 'Finalizing',
    reason: 'DataMoved',
    note: moved.note,
    condition: { type: 'DataMoved', status: 'True' },
    status: (s) => {
      s.snapshotID = moved.snapshotID;
      const du = s as NonNullable<DataUpload['status']>;
      if (current.kind === 'DataUpload' && moved.parentSnapshotID) du.parentSnapshotID = moved.parentSnapshotID;
      if (moved.blockRead) du.changeTracking = { ...du.changeTracking, ...trackingOf(moved.blockRead) };
      s.stats = moved.stats;
      s.progress = finishedProgress(moved.stats.bytes);
    },
  });
  return { outcome: 'Advanced', reason: moved.note, counters: { ...moved.stats } };
}

/** What a stopped transfer leaves, said as the resource's message. */
function keptAfterStop(r: FerryResource): string {
  if (r.kind === 'DataDownload')
    return `the volume partly restored is not given to PVC ${r.spec.targetPVC.name}; it is removed as the restore ends.`;
  // the packs already uploaded stay: deduplication hands them to the next backup, prune frees them if none takes them
  return `no snapshot was saved, but the data already uploaded stays in the repository: the next backup of PVC ${r.spec.sourcePVC} reuses it (a prune frees it if none does).`;
}

/** After an abort: no snapshot of this DataUpload may remain; a cancel or deletion moves the phase to Canceling. */
async function stopped(ctx: StepContext, r: FerryResource, repo: Repository, watch: CancelWatch): Promise<Outcome> {
  if (r.kind === 'DataUpload') {
    const { removed } = await forget(
      repo,
      (snapshots) => snapshotsOf(snapshots, r).map((e) => e.id),
      stepLocking(ctx, ctx.signal),
    );
    if (removed.length > 0) ctx.log.info('forgot the snapshot the canceled backup had saved', { snapshots: removed });
  }
  if (watch.reason === 'cancel' || watch.reason === 'deleting') {
    await transition(ctx, r, {
      to: 'Canceling',
      reason: 'Canceling',
      note: `The transfer stopped because ${watch.reason === 'cancel' ? 'cancel was requested' : 'the resource is being deleted'}; ${keptAfterStop(r)}`,
      condition: { type: 'Succeeded', status: 'False' },
    });
    return { outcome: 'Canceled', reason: 'the transfer stopped on request' };
  }
  return {
    outcome: 'Skipped',
    reason: `the transfer stopped: the resource is ${watch.reason === 'gone' ? 'gone' : 'no longer in a transfer phase'}`,
  };
}

async function backupVolume(
  ctx: StepContext,
  du: DataUpload,
  repo: Repository,
  signal: AbortSignal,
  progress: ProgressWriter,
): Promise<Moved> {
  const started = Date.now();
  const block = du.status?.volumeMode === 'Block';
  const path = block ? ctx.settings.devicePath : ctx.settings.volumePath;
  if (!(await exists(path)))
    throw new StepFailure(
      'VolumeNotMounted',
      `The exposed volume is not mounted at ${path}; the Job template must mount the backup PVC there.`,
    );
  const size = block ? await deviceSize(path) : undefined;
  const result = await backup(repo, {
    ...stepLocking(ctx, signal),
    paths: [path],
    stream: block
      ? { name: `${du.spec.sourcePVC}.img`, size, changes: (parent) => blockChanges(ctx, du, size, parent) }
      : undefined,
    saved: (snapshots) => snapshotsOf(snapshots, du)[0],
    parent: (snapshots) => parentOf(snapshots, du),
    tags: snapshotTags(du),
    hostname: du.spec.sourcePVC,
    onProgress: (p) => progress.update(p.bytesDone, p.bytesTotal, p.totalsFinal),
  });
  if ('taken' in result) {
    ctx.log.info('a previous run of this backup already saved its snapshot; taking it', {
      snapshotID: result.taken.id,
    });
    return movedFromSnapshot(result.taken, 'Took over the snapshot a previous run saved');
  }
  const s = result.snapshot.summary!;
  const parent = result.snapshot.parent ?? undefined;
  const read = result.archive.blockRead;
  return {
    snapshotID: result.snapshotID,
    parentSnapshotID: parent,
    blockRead: read,
    stats: {
      files: s.totalFilesProcessed,
      bytes: s.totalBytesProcessed,
      bytesAdded: s.dataAdded,
      bytesStored: s.dataAddedPacked,
      durationSeconds: (Date.now() - started) / 1000,
    },
    note: `Backed up ${s.totalFilesProcessed} file(s), ${s.totalBytesProcessed} bytes, into snapshot ${result.snapshotID.slice(0, 8)}${parent ? ` (parent ${parent.slice(0, 8)})` : ''}; ${s.dataAdded} bytes were new.${read ? ` ${describeRead(read)}` : ''}`,
  };
}

const modes = { changed: 'Changed', allocated: 'Allocated', full: 'Full' } as const;

function trackingOf(read: BlockRead): ChangeTracking {
  return { mode: modes[read.mode], bytesRead: read.bytesRead, ...(read.reason ? { reason: read.reason } : {}) };
}

function describeRead(read: BlockRead): string {
  const what = {
    changed: 'the blocks changed since the parent',
    allocated: 'the allocated blocks',
    full: 'the whole device',
  }[read.mode];
  return `Read ${what}: ${read.bytesRead} of ${read.size} bytes${read.reason ? ` (${read.reason})` : ''}.`;
}

function movedFromSnapshot(e: SnapshotEntry, what: string): Moved {
  const s = e.snapshot.summary;
  return {
    snapshotID: e.id,
    parentSnapshotID: e.snapshot.parent ?? undefined,
    stats: {
      files: s?.totalFilesProcessed ?? 0,
      bytes: s?.totalBytesProcessed ?? 0,
      bytesAdded: s?.dataAdded ?? 0,
      bytesStored: s?.dataAddedPacked ?? 0,
      durationSeconds: 0,
    },
    note: `${what}: ${e.id.slice(0, 8)}.`,
  };
}

async function restoreVolume(
  ctx: StepContext,
  dd: DataDownload,
  repo: Repository,
  signal: AbortSignal,
  progress: ProgressWriter,
  resumed: boolean,
): Promise<Moved> {
  const started = Date.now();
  const id = dd.status?.snapshotID ?? dd.spec.source.snapshotID;
  if (!id)
    throw new StepFailure('SnapshotNotRecorded', 'No snapshot to restore is recorded; the expose step did not finish.');
  const block = await exists(ctx.settings.devicePath);
  const target = block ? ctx.settings.devicePath : ctx.settings.volumePath;
  if (!block && !(await exists(target)))
    throw new StepFailure(
      'VolumeNotMounted',
      `The restore volume is not mounted at ${target} (nor a device at ${ctx.settings.devicePath}).`,
    );
  const size = block ? await deviceSize(target) : undefined;
  let total = 0;
  const restored = await restore(repo, {
    ...stepLocking(ctx, signal),
    snapshot: id,
    target: block
      ? { kind: 'device', path: target, zeroed: dd.spec.targetPVC.zeroedVolume }
      : { kind: 'volume', path: target },
    onProgress: (p) => progress.update(p.bytesDone, Math.max(total, p.bytesTotal)),
    beforeWrite: async ({ entry, streamSize }) => {
      total = entry.snapshot.summary?.totalBytesProcessed ?? 0;
      if (size !== undefined && streamSize !== undefined && size < Number(streamSize)) {
        throw new StepFailure(
          'VolumeTooSmall',
          `The restore volume holds ${size} bytes but the snapshot's volume has ${streamSize}; set spec.targetPVC.size.`,
        );
      }
      // a crashed run left part of the tree; start again from an empty volume
      if (!block && resumed) await emptyDirectory(target);
    },
  });
  return {
    snapshotID: restored.snapshot.id,
    stats: {
      files: restored.filesDone,
      bytes: restored.bytesDone,
      bytesAdded: 0,
      bytesStored: 0,
      durationSeconds: (Date.now() - started) / 1000,
    },
    note: `Restored ${restored.filesDone} file(s), ${restored.bytesDone} bytes, from snapshot ${restored.snapshot.id.slice(0, 8)}.`,
  };
}

async function emptyDirectory(dir: string): Promise<void> {
  for (const name of await readdir(dir)) await rm(join(dir, name), { recursive: true, force: true });
}

export const transferStep = dataStep('transfer', transfer);
