// How a block device is read in a backup: against the parent's content and the changed ranges, only its allocated
// ranges, or whole. Decided on the main thread (the index lives there) and carried out by a pool worker; every way
// yields the same content list, the choice only changes what is read, and why a cheaper way was not taken is kept
// for status.
import type { ID } from '../ids/id.ts';
import { plainLength } from '../pack/blob.ts';
import type { Repository } from '../repository/repository.ts';
import type { TreeNode } from '../tree/node.ts';
import { normalizeRanges, rangeBytes, type ByteRange } from './byte-ranges.ts';
import { parentUnusable, type ParentBlob } from './changed-chunks.ts';

/** What changed-block tracking told of the device, given once the backup's parent snapshot is known. */
export interface BlockChanges {
  /** the ranges changed since the device of repository snapshot `since` */
  changed?: { since: ID; ranges: ByteRange[] };
  /** the ranges that hold data; all others read as zeros */
  allocated?: ByteRange[];
  /** why tracking gave nothing (or less than it could), for status */
  reason?: string;
}

/** What a worker is told to read. */
export interface BlockPlan {
  size: number;
  parent?: ParentBlob[];
  changed?: ByteRange[];
  allocated?: ByteRange[];
}

export interface BlockRead {
  mode: 'changed' | 'allocated' | 'full';
  /** bytes read from the device */
  bytesRead: number;
  size: number;
  /** why a cheaper mode was not used */
  reason?: string;
}

/**
 * The plan for device node `parent.name` of `size` bytes, given the parent snapshot (`parent.id`, its root tree's
 * nodes) and what tracking reported. A parent whose content is not all in the repository, or not `size` bytes, is
 * not used; a device of unknown size is read as a plain stream.
 */
export function planBlocks(
  repo: Repository,
  size: number,
  changes: BlockChanges,
  parent: { id: ID | undefined; nodes: TreeNode[] | undefined; name: Uint8Array },
): { plan?: BlockPlan; mode: BlockRead['mode']; reason?: string } {
  if (size <= 0) return { mode: 'full', reason: 'the device size is unknown' };
  let reason = changes.reason;
  if (changes.changed) {
    const blobs = parentBlobs(repo, parent.nodes, parent.name);
    const unusable =
      parent.id !== changes.changed.since
        ? `the changes are relative to snapshot ${changes.changed.since.slice(0, 8)}, not to the parent ${parent.id?.slice(0, 8) ?? '(none)'}`
        : typeof blobs === 'string'
          ? blobs
          : parentUnusable(blobs, size);
    if (!unusable)
      return {
        plan: { size, parent: blobs as ParentBlob[], changed: normalizeRanges(changes.changed.ranges, size) },
        mode: 'changed',
      };
    reason = `changed blocks not used: ${unusable}`;
  }
  if (changes.allocated)
    return { plan: { size, allocated: normalizeRanges(changes.allocated, size) }, mode: 'allocated', reason };
  return { plan: { size }, mode: 'full', reason };
}

/** What a read by `planned` did: a device read as a plain stream reads all `size` bytes. */
export function blockReadOf(
  planned: { mode: BlockRead['mode']; reason?: string },
  size: number,
  bytesRead: number | undefined,
): BlockRead {
  return {
    mode: planned.mode,
    bytesRead: bytesRead ?? size,
    size,
    ...(planned.reason ? { reason: planned.reason } : {}),
  };
}

/**
 * Below this much to read, a device's read runs on the main thread: a worker thread's start (0.1-0.15 s of CPU,
 * its own copy of Node's and our modules) costs more than it saves by working beside the main thread
 * (bench/README.md).
 */
const threadFrom = 64 << 20;
/** each change is read again from the parent's cut before it to a cut both share after it: about a chunk each side */
const readAroundChange = 2 << 20;

/** Whether a read of the `changed` ranges (sorted, not overlapping) is too small to be worth a thread of its own. */
export function smallChangedRead(changed: readonly ByteRange[]): boolean {
  return rangeBytes(changed) + changed.length * readAroundChange < threadFrom;
}

/** The parent's device content with each blob's size from the index, or why it cannot be had. */
function parentBlobs(repo: Repository, nodes: TreeNode[] | undefined, name: Uint8Array): ParentBlob[] | string {
  const node = nodes?.find((n) => Buffer.from(n.name).equals(name));
  if (!node || node.type !== 'file') return `the parent snapshot holds no device file ${Buffer.from(name).toString()}`;
  const blobs: ParentBlob[] = [];
  for (const id of node.content ?? []) {
    const at = repo.index.get(id, 'data');
    if (!at) return `the parent's data blob ${id.slice(0, 8)} is not in the repository`;
    blobs.push({ id, size: plainLength(at) });
  }
  return blobs;
}
