// The "1% changed" step of the incremental benchmarks, and its undo: a few KiB inside 1% of the files (new bytes, new
// mtime, same size), or 1% of a block volume's bytes in a handful of places, are overwritten, and afterwards the
// original bytes are put back, so the next round starts from the dataset the seed describes.
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { seededRandom } from '../../test/support/seeded.ts';
import { randomBytes, subSeed } from './content.ts';
import type { Dataset } from './datasets.ts';

export interface Change {
  path: string;
  offset: number;
  original: Buffer;
}

const patchSize = 4096;

function chooseFiles(count: number, wanted: number, random: () => number): number[] {
  const chosen = new Set<number>();
  while (chosen.size < Math.min(wanted, count)) chosen.add(Math.floor(random() * count));
  return [...chosen].sort((a, b) => a - b);
}

async function overwrite(path: string, offset: number, bytes: Buffer): Promise<Buffer> {
  const fh = await open(path, 'r+');
  try {
    const original = Buffer.alloc(bytes.length);
    await fh.read(original, 0, bytes.length, offset);
    await fh.write(bytes, 0, bytes.length, offset);
    return original;
  } finally {
    await fh.close();
  }
}

/** Changes `fraction` of the dataset's files (at least one); `round` makes each round change different files. */
export async function changeFiles(dataset: Dataset, seed: number, fraction: number, round: number): Promise<Change[]> {
  const random = seededRandom(subSeed(seed, `change-${round}`));
  const picks = chooseFiles(dataset.plan.length, Math.max(1, Math.round(dataset.plan.length * fraction)), random);
  const changes: Change[] = [];
  for (const i of picks) {
    const file = dataset.plan[i];
    const length = Math.min(patchSize, file.size);
    const offset = Math.floor(random() * (file.size - length + 1));
    const path = join(dataset.path, file.path);
    const original = await overwrite(path, offset, randomBytes(seed, `change-${round}/${file.path}`, length));
    changes.push({ path, offset, original });
  }
  return changes;
}

/** A block volume's change: where new bytes go, and the ranges a changed-block tracking driver would report. */
export interface ImageChange {
  writes: { offset: number; length: number }[];
  /** the writes rounded out to whole blocks, sorted: what the driver lists */
  reported: { offset: number; length: number }[];
}

/** a driver's block: CSI drivers report changes in whole blocks of their device */
export const trackedBlock = 4096;

/**
 * `fraction` of an image of `size` bytes in `places` writes, one at a random place (not block aligned) inside each
 * of `places` equal sections, so they are spread over the image and never touch; `round` makes each round differ.
 */
export function planImageChange(
  size: number,
  seed: number,
  fraction: number,
  places: number,
  round: number,
): ImageChange {
  const random = seededRandom(subSeed(seed, `change-image-${round}`));
  const length = Math.max(1, Math.floor((size * fraction) / places));
  const section = Math.floor(size / places);
  // a gap of two blocks keeps neighbouring reported ranges apart
  if (length + 2 * trackedBlock > section)
    throw new Error(`${places} changes of ${length} bytes do not fit apart in ${size} bytes`);
  const writes = [];
  for (let i = 0; i < places; i++) {
    const slack = section - length - 2 * trackedBlock;
    writes.push({ offset: i * section + trackedBlock + Math.floor(random() * (slack + 1)), length });
  }
  const reported = writes.map((w) => {
    const offset = Math.floor(w.offset / trackedBlock) * trackedBlock;
    return { offset, length: Math.min(size, Math.ceil((w.offset + w.length) / trackedBlock) * trackedBlock) - offset };
  });
  return { writes, reported };
}

/** Writes `change` into the image (new incompressible bytes); the originals come back for the undo. */
export async function changeImage(path: string, seed: number, change: ImageChange, round: number): Promise<Change[]> {
  const changes: Change[] = [];
  for (const w of change.writes) {
    const original = await overwrite(path, w.offset, randomBytes(seed, `change-image-${round}@${w.offset}`, w.length));
    changes.push({ path, offset: w.offset, original });
  }
  return changes;
}

export async function undoChanges(changes: Change[]): Promise<void> {
  for (const c of changes) await overwrite(c.path, c.offset, c.original);
}
