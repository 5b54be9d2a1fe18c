// `ferry repo backup --stream NAME --changed-ranges FILE`: the byte ranges of the device a changed-block tracking
// driver reported as changed since the parent snapshot. The file comes from a script, so it is checked whole before
// anything is read or written: a wrong list would silently leave changed bytes out of the backup, the one failure a
// backup must not have. Unlike the engine (which merges what a driver sends), nothing is repaired here.
import { readFile } from 'node:fs/promises';
import { deviceSize, smallChangedRead, type BlockChanges, type ByteRange } from '../../engine/operations/blocks.ts';
import type { SnapshotEntry } from '../../engine/operations/snapshots.ts';
import { UsageError } from '../run.ts';

export const changedRangesFlag = '--changed-ranges';

const shape = 'a JSON array of {"offset": BYTES, "length": BYTES}, sorted by offset and not overlapping';

/** The ranges of `text` for a device of `size` bytes, or a UsageError naming the entry at fault. */
export function parseChangedRanges(text: string, size: number, file: string): ByteRange[] {
  const where = `${changedRangesFlag} ${file}`;
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${where} is not JSON (${(err as Error).message}); it must be ${shape}`);
  }
  if (!Array.isArray(doc)) throw new UsageError(`${where} holds ${kindOf(doc)}; it must be ${shape}`);
  const ranges: ByteRange[] = [];
  for (const [i, entry] of doc.entries()) {
    const at = `${where}: entry ${i}`;
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      throw new UsageError(`${at} is ${kindOf(entry)}, not {"offset": BYTES, "length": BYTES}`);
    const extra = Object.keys(entry).filter((k) => k !== 'offset' && k !== 'length');
    if (extra.length > 0)
      throw new UsageError(`${at} has the unknown field "${extra[0]}"; an entry holds only "offset" and "length"`);
    const { offset, length } = entry as Record<string, unknown>;
    for (const [name, v, min] of [
      ['offset', offset, 0],
      ['length', length, 1],
    ] as const) {
      if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min)
        throw new UsageError(
          `${at} has ${name} ${JSON.stringify(v) ?? 'missing'}; it must be a whole number of bytes of at least ${min}`,
        );
    }
    const r = { offset: offset as number, length: length as number };
    if (r.offset + r.length > size)
      throw new UsageError(
        `${at} (offset ${r.offset}, length ${r.length}) ends at byte ${r.offset + r.length}, past the device's end at ${size}`,
      );
    const before = ranges.at(-1);
    if (before && r.offset < before.offset + before.length)
      throw new UsageError(
        `${at} (offset ${r.offset}) ${r.offset < before.offset ? 'comes before' : 'overlaps'} entry ${i - 1} ` +
          `(offset ${before.offset}, length ${before.length}); entries must be sorted by offset and not overlap`,
      );
    ranges.push(r);
  }
  return ranges;
}

/** The ranges in `file`, read and checked for a device of `size` bytes. */
export async function readChangedRanges(file: string, size: number): Promise<ByteRange[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${changedRangesFlag} ${file} cannot be read: ${(err as Error).message}`);
  }
  return parseChangedRanges(text, size, file);
}

/**
 * The device's size and its changed-block tracking for --changed-ranges (nothing without it): the ranges count as
 * changed since whichever parent the backup takes; with none, the device is read whole and the summary says why.
 * `readsLittle`: the ranges are few and small enough for the read to run without a worker thread.
 */
export async function changedRangesOption(
  file: string | undefined,
  stream: string | undefined,
  parent: string | undefined,
  path: string,
): Promise<{
  size?: number;
  changes?: (parent: SnapshotEntry | undefined) => Promise<BlockChanges>;
  readsLittle?: boolean;
}> {
  if (file === undefined) return {};
  if (stream === undefined) throw new UsageError(`${changedRangesFlag} needs --stream: it describes one device`);
  if (parent === 'none')
    throw new UsageError(`${changedRangesFlag} lists changes since a parent snapshot; --parent none leaves none`);
  const size = await deviceSize(path).catch((err: Error) => {
    throw new UsageError(`cannot read ${path}: ${err.message}`);
  });
  if (size === undefined)
    throw new UsageError(`${changedRangesFlag} needs a block device or an image file; the size of ${path} is unknown`);
  const ranges = await readChangedRanges(file, size);
  return {
    size,
    readsLittle: smallChangedRead(ranges),
    changes: async (parentEntry) =>
      parentEntry
        ? { changed: { since: parentEntry.id, ranges } }
        : { reason: `${changedRangesFlag} not used: no parent snapshot was found to compare against` },
  };
}

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'object' ? 'an object' : `the ${typeof v} ${JSON.stringify(v)}`;
}
