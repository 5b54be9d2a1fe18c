// Restore of a stream snapshot (a block volume or image backed up as one file) onto an existing file or block
// device, blobs written at their offsets a few at a time; all-zero chunks are written too unless the target is
// known to read as zeros (zero-ranges.ts).
import type { ID } from '../ids/id.ts';
import type { Repository } from '../repository/repository.ts';
import type { TreeNode } from '../tree/node.ts';
import { newProgress, throttled, type Progress, type ProgressFn } from '../concurrency/progress.ts';
import { writeFileContent } from './file-writer.ts';
import { PackReader } from './pack-reader.ts';
import { openHere } from './open-blobs.ts';
import { ByteBudget } from './byte-budget.ts';
import { RestoreError } from './restorer.ts';

export interface StreamRestoreOptions {
  signal?: AbortSignal;
  onProgress?: ProgressFn;
  /** ranged pack reads in flight */
  loads?: number;
  /** the target reads as zeros where not written (its storage zeroes new volumes): zero ranges are skipped */
  zeroed?: boolean;
}

/** The one file a stream snapshot's root tree holds. */
export async function streamNode(repo: Repository, root: ID, signal?: AbortSignal): Promise<TreeNode> {
  const nodes = await repo.loadTree(root, signal);
  if (nodes.length !== 1 || nodes[0].type !== 'file') {
    throw new RestoreError(
      `the snapshot holds ${nodes.length} entries at its root, not the single file of a block volume backup`,
    );
  }
  return nodes[0];
}

export async function restoreStream(
  repo: Repository,
  root: ID,
  target: string,
  opts: StreamRestoreOptions = {},
): Promise<Progress> {
  const node = await streamNode(repo, root, opts.signal);
  const progress = newProgress();
  progress.filesTotal = 1;
  progress.bytesTotal = Number(node.size);
  progress.totalsFinal = true;
  progress.currentPath = target;
  const tick = throttled(opts.onProgress, progress);
  // the reader is the file's whole content source: it reads the blobs and takes back the budget once each is written
  const reader = new PackReader(repo.backend, openHere(repo), {
    reads: opts.loads,
    signal: opts.signal,
    budget: new ByteBudget(64 << 20),
  });
  await writeFileContent(
    repo,
    Buffer.from(target),
    node.content ?? [],
    reader,
    (n) => {
      progress.bytesDone += n;
      tick.tick();
    },
    opts.signal,
    { existing: true, zeroed: opts.zeroed },
  );
  progress.filesDone = 1;
  tick.flush();
  return progress;
}
