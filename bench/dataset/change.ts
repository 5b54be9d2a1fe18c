// The "1% of files changed" step of the incremental benchmark, and its undo: a few KiB inside each chosen file are
// overwritten (new bytes, new mtime, same size), and afterwards the original bytes are put back, so the next round
// starts from the dataset the seed describes.
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

export async function undoChanges(changes: Change[]): Promise<void> {
  for (const c of changes) await overwrite(c.path, c.offset, c.original);
}
