// One repository's life for one peer on one dataset: the measured operations of issue 7, in order, each checked.
// A: full backup, incremental with no change, incremental after changing 1% of files, listing the snapshots, full
// restore.
// B: backup and restore of a million tiny files. C: block image backup and restore, holes kept. E (issue 34):
// backup and restore of one large file.
// D (issue 34): block volume backup, 1% of it changed, incremental through changed-block tracking (ferry given the
// changed ranges) and reading the whole volume (every peer), and the incremental restored byte for byte.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { changeFiles, changeImage, planImageChange, undoChanges } from './dataset/change.ts';
import type { Dataset } from './dataset/datasets.ts';
import { measure } from './measure/child.ts';
import type { Command } from './measure/child.ts';
import { requestsBetween } from './measure/minio-metrics.ts';
import { restoreFolder, type RestoreFolderKind } from './measure/fresh-fs.ts';
import { settle } from './measure/settle.ts';
import { countTree } from './measure/stored.ts';
import { firstDifference, onlyFile } from './measure/same-bytes.ts';
import { ferrySummary } from './peers/ferry.ts';
import type { Peer, Place, RepoCommands, Source } from './peers/peer.ts';
import type { Target, TargetName } from './targets.ts';

export type OpName =
  | 'backup'
  | 'backup-unchanged'
  | 'backup-1pct-changed'
  | 'snapshots'
  | 'restore'
  /** D: an incremental after 1% changed, reading only the changed ranges (changed-block tracking) */
  | 'block-incremental-cbt'
  /** D: the same incremental reading the whole volume */
  | 'block-incremental-full';

export interface OpResult {
  dataset: string;
  datasetID: string;
  op: OpName;
  peer: string;
  target: TargetName;
  rep: number;
  ok: boolean;
  error?: string;
  wallSeconds?: number;
  cpuSeconds?: number;
  maxRssBytes?: number;
  /** dataset bytes over wall time: what a backup read or a restore wrote */
  throughput?: number;
  /** repository size after a backup */
  storedBytes?: number;
  /** S3 requests the operation made (MinIO only) */
  s3Requests?: number;
  /** the same, per S3 call (PutObject, GetObject, ...) */
  s3ByName?: Record<string, number>;
  /** restores: bytes the restored files occupy on disk (shows whether holes survived) */
  restoredAllocated?: number;
  /** restores: into a filesystem made for it, or a folder of the work filesystem */
  restoredOn?: RestoreFolderKind;
  /** D's backups: bytes the process tree's read calls returned (rchar: page cache, pipes and sockets included) */
  bytesRead?: number;
  /** D's backups: bytes of those that came from storage (read_bytes) */
  storageBytesRead?: number;
  /** D's backups by ferry with changed ranges: what ferry says it read of the device, and how */
  deviceBytesRead?: number;
  readMode?: string;
}

export interface ScenarioContext {
  seed: number;
  changeFraction: number;
  changePlaces: number;
  timeoutSeconds: number;
  log: (message: string) => void;
}

/** Thrown when a step fails, so the rest of that repository's operations are skipped. */
class StepFailed extends Error {}

async function setUp(commands: Command[], work: string, timeoutSeconds: number): Promise<void> {
  for (const cmd of commands) {
    const r = await measure(cmd, work, timeoutSeconds);
    if (r.exitCode !== 0)
      throw new StepFailed(`set-up "${cmd.argv.slice(1).join(' ')}" exited ${r.exitCode}: ${r.output.slice(-800)}`);
  }
}

interface Run {
  ctx: ScenarioContext;
  dataset: Dataset;
  peer: Peer;
  target: Target;
  place: Place;
  repo: RepoCommands;
  work: string;
  rep: number;
  results: OpResult[];
}

async function measured(
  run: Run,
  op: OpName,
  cmd: Command,
  after?: (r: OpResult, output: string) => Promise<void>,
): Promise<void> {
  const { dataset, peer, target, place, rep } = run;
  const base: OpResult = {
    dataset: dataset.name,
    datasetID: dataset.id,
    op,
    peer: peer.name,
    target: target.name,
    rep,
    ok: false,
  };
  await settle();
  const before = await target.requests(place);
  const figures = await measure(cmd, run.work, run.ctx.timeoutSeconds);
  const result: OpResult = {
    ...base,
    ok: figures.exitCode === 0,
    wallSeconds: figures.wallSeconds,
    cpuSeconds: figures.cpuSeconds,
    maxRssBytes: figures.maxRssBytes,
    throughput: op === 'snapshots' ? undefined : dataset.bytes / figures.wallSeconds,
    bytesRead: figures.reads?.calls,
    storageBytesRead: figures.reads?.storage,
  };
  const afterRequests = await target.requests(place);
  if (before !== undefined && afterRequests !== undefined) {
    const made = requestsBetween(before, afterRequests);
    result.s3Requests = made.total;
    result.s3ByName = made.byName;
  }
  run.results.push(result);
  const line = `${dataset.name} ${target.name} rep ${rep} ${peer.name} ${op}`;
  if (!result.ok) {
    result.error = `exit ${figures.exitCode}: ${figures.output.slice(-800)}`;
    throw new StepFailed(`${line} failed: ${result.error}`);
  }
  await after?.(result, figures.output);
  run.ctx.log(
    `${line}: ${figures.wallSeconds.toFixed(2)} s, cpu ${figures.cpuSeconds.toFixed(2)} s, ` +
      `rss ${(figures.maxRssBytes / 2 ** 20).toFixed(0)} MiB${result.s3Requests === undefined ? '' : `, ${result.s3Requests} S3 requests`}`,
  );
}

function storeSize(run: Run): (r: OpResult) => Promise<void> {
  return async (r) => {
    r.storedBytes = await run.target.storedBytes(run.place);
  };
}

/** Marks `r` failed for `why`, which skips the rest of the repository's operations. */
function fail(r: OpResult, why: string): never {
  r.ok = false;
  r.error = why;
  throw new StepFailed(why);
}

/**
 * Restores into an empty folder (a fresh filesystem where the machine allows), checks file count and bytes against
 * the dataset (and every byte against `sameAs`, an image), then removes the copy.
 */
async function restoreAndCheck(run: Run, source: Source, sameAs?: string): Promise<void> {
  const folder = await restoreFolder(run.work, run.dataset.bytes, run.dataset.files);
  const dir = folder.dir;
  try {
    await measured(run, 'restore', run.repo.restore(source, dir), async (r) => {
      r.restoredOn = folder.kind;
      const got = await countTree(dir);
      r.restoredAllocated = got.allocated;
      if (got.files !== run.dataset.files || got.bytes !== run.dataset.bytes)
        fail(
          r,
          `restored ${got.files} files of ${got.bytes} bytes, expected ${run.dataset.files} files of ${run.dataset.bytes} bytes`,
        );
      const differs = sameAs === undefined ? undefined : await firstDifference(await onlyFile(dir), sameAs);
      if (differs !== undefined) fail(r, `the restored image differs from the one backed up at byte ${differs}`);
    });
  } finally {
    await folder.release();
  }
}

async function mixedOps(run: Run): Promise<void> {
  const path = run.dataset.path;
  await measured(run, 'backup', run.repo.backup(path), storeSize(run));
  await measured(run, 'backup-unchanged', run.repo.backup(path), storeSize(run));
  const changes = await changeFiles(run.dataset, run.ctx.seed, run.ctx.changeFraction, run.rep);
  try {
    await measured(run, 'backup-1pct-changed', run.repo.backup(path), storeSize(run));
  } finally {
    await undoChanges(changes);
  }
  // what every command pays before its work (start-up, key derivation), measured apart so the report can take it
  // out of the incremental figures
  await measured(run, 'snapshots', run.repo.snapshots());
  await restoreAndCheck(run, { path });
}

const streamName = 'volume.img';

async function imageOps(run: Run): Promise<void> {
  await measured(run, 'backup', run.repo.backupStream(run.dataset.path, streamName), storeSize(run));
  await restoreAndCheck(run, { stream: streamName });
}

/** The command with the bytes its process tree reads counted. */
const reading = (cmd: Command): Command => ({ ...cmd, countReads: true });

/**
 * Issue 34's block incremental: after a full backup, 1% of the volume changes in a handful of places; ferry backs it
 * up given the ranges a driver would report, then every peer reads it whole. The tracked backup comes first, so it
 * stores the changed data itself (as a real one does); ferry's full read after it must then find every blob stored,
 * which shows the tracked backup saved the content a full read makes. The incremental restores byte for byte, and
 * listing the snapshots measures what opening the repository costs.
 */
async function volumeOps(run: Run): Promise<void> {
  const { ctx, dataset, repo } = run;
  await measured(run, 'backup', reading(repo.backupStream(dataset.path, streamName)), storeSize(run));
  const change = planImageChange(dataset.bytes, ctx.seed, ctx.changeFraction, ctx.changePlaces, run.rep);
  const rangesFile = join(run.work, 'changed-ranges.json');
  await writeFile(rangesFile, JSON.stringify(change.reported));
  const changes = await changeImage(dataset.path, ctx.seed, change, run.rep);
  try {
    let tracked: string | undefined;
    if (repo.backupChanged) {
      const cmd = reading(repo.backupChanged(dataset.path, streamName, rangesFile));
      await measured(run, 'block-incremental-cbt', cmd, async (r, output) => {
        const summary = ferrySummary(output);
        tracked = summary.snapshot_id;
        r.deviceBytesRead = summary.block_read?.bytes_read;
        r.readMode = summary.block_read?.mode;
        r.storedBytes = await run.target.storedBytes(run.place);
        if (r.readMode !== 'changed')
          fail(
            r,
            `the changed ranges were not used (${r.readMode}): ${summary.block_read?.reason ?? 'no reason given'}`,
          );
      });
    }
    await measured(
      run,
      'block-incremental-full',
      reading(repo.backupStream(dataset.path, streamName)),
      async (r, output) => {
        r.storedBytes = await run.target.storedBytes(run.place);
        const added = tracked === undefined ? 0 : ferrySummary(output).data_blobs;
        if (added !== 0)
          fail(r, `the full read after the tracked backup stored ${added} new data blobs: their contents differ`);
      },
    );
    await restoreAndCheck(run, { stream: streamName, snapshot: tracked }, dataset.path);
  } finally {
    await undoChanges(changes);
  }
  // start-up and key derivation, which the tracked incremental pays in full however little it reads
  await measured(run, 'snapshots', repo.snapshots());
}

async function treeOps(run: Run): Promise<void> {
  await measured(run, 'backup', run.repo.backup(run.dataset.path), storeSize(run));
  await restoreAndCheck(run, { path: run.dataset.path });
}

/** Runs one peer's operations on a fresh repository; failures are recorded in the results, not thrown. */
export async function runScenario(
  ctx: ScenarioContext,
  dataset: Dataset,
  peer: Peer,
  target: Target,
  rep: number,
  workRoot: string,
): Promise<OpResult[]> {
  const label = `${dataset.id}-${peer.name}-${rep}-${Date.now().toString(36)}`.toLowerCase();
  const work = join(workRoot, `work-${label}`);
  await mkdir(work, { recursive: true });
  const place = await target.fresh(label);
  const run: Run = { ctx, dataset, peer, target, place, repo: peer.repo(place, work), work, rep, results: [] };
  try {
    await setUp(run.repo.init(), work, ctx.timeoutSeconds);
    if (dataset.id === 'A') await mixedOps(run);
    else if (dataset.id === 'B' || dataset.id === 'E') await treeOps(run);
    else if (dataset.id === 'D') await volumeOps(run);
    else await imageOps(run);
  } catch (err) {
    if (!(err instanceof StepFailed)) throw err;
    ctx.log(err.message);
    if (run.results.length === 0) {
      run.results.push({
        dataset: dataset.name,
        datasetID: dataset.id,
        op: 'backup',
        peer: peer.name,
        target: target.name,
        rep,
        ok: false,
        error: err.message,
      });
    }
  } finally {
    await target.discard(place).catch((err: Error) => ctx.log(`could not remove repository ${label}: ${err.message}`));
    await rm(work, { recursive: true, force: true });
  }
  return run.results;
}
