// What each dataset holds, as a list of files computed from the seed alone: generators write it, the 1% change
// picks from it, and restores are checked against it.
import { seededRandom } from '../../test/support/seeded.ts';
import { subSeed } from './content.ts';

export type Content = 'random' | 'text' | 'tiny';

export interface PlannedFile {
  /** relative to the dataset folder */
  path: string;
  size: number;
  content: Content;
}

export interface MixedScale {
  randomBytes: number;
  /** incompressible files are 1 MiB up to this size */
  randomFileMax: number;
  textBytes: number;
  textFileMax: number;
  smallFiles: number;
}

export interface ImageScale {
  size: number;
  /** fraction of the image that holds data; the rest are holes */
  dataFraction: number;
}

const MiB = 1024 * 1024;

/** Files of sizes drawn between `min` and `max` until `total` bytes, the last one trimmed to fit. */
function sizedFiles(random: () => number, total: number, min: number, max: number): number[] {
  const sizes: number[] = [];
  let left = total;
  while (left > 0) {
    const size = Math.min(left, min + Math.floor(random() * (max - min + 1)));
    sizes.push(size);
    left -= size;
  }
  return sizes;
}

/** A deep tree: the base-4 digits of the file number name its folders, 16 files to a folder. */
function deepPath(i: number, count: number): string {
  const depth = Math.max(1, Math.ceil(Math.log(Math.max(count, 2) / 16) / Math.log(4)));
  const dirs: string[] = [];
  let n = Math.floor(i / 16);
  for (let d = 0; d < depth; d++) {
    dirs.push(`d${n % 4}`);
    n = Math.floor(n / 4);
  }
  return `${dirs.reverse().join('/')}/f${String(i % 16).padStart(2, '0')}`;
}

/** Dataset A: incompressible large files, compressible text and JSON, and many small files in a deep tree. */
export function planMixed(seed: number, scale: MixedScale): PlannedFile[] {
  const random = seededRandom(subSeed(seed, 'plan-A'));
  const files: PlannedFile[] = [];
  sizedFiles(random, scale.randomBytes, MiB, scale.randomFileMax).forEach((size, i) => {
    files.push({ path: `large/blob-${String(i).padStart(4, '0')}.bin`, size, content: 'random' });
  });
  sizedFiles(random, scale.textBytes, 64 * 1024, scale.textFileMax).forEach((size, i) => {
    const ext = i % 2 === 0 ? 'jsonl' : 'log';
    files.push({ path: `text/part-${String(i).padStart(4, '0')}.${ext}`, size, content: 'text' });
  });
  for (let i = 0; i < scale.smallFiles; i++) {
    const size = 1024 + Math.floor(random() * 15 * 1024);
    // a third incompressible (images, keys, archives), the rest text (configs, sources)
    files.push({ path: `small/${deepPath(i, scale.smallFiles)}`, size, content: i % 3 === 0 ? 'random' : 'text' });
  }
  return files;
}

/** Dataset B: `count` files of 100 bytes, 1000 to a folder, 100 folders to a parent. */
export function planTiny(count: number): PlannedFile[] {
  const files: PlannedFile[] = [];
  for (let i = 0; i < count; i++) {
    const top = Math.floor(i / 100_000);
    const mid = Math.floor(i / 1000) % 100;
    files.push({
      path: `t${top}/m${String(mid).padStart(2, '0')}/f${String(i % 1000).padStart(3, '0')}`,
      size: 100,
      content: 'tiny',
    });
  }
  return files;
}

export interface Extent {
  offset: number;
  length: number;
  content: Content;
}

/** Dataset C: 1 MiB slots of the image chosen at random hold data (random or text, in runs); the rest are holes. */
export function planImage(seed: number, scale: ImageScale): Extent[] {
  const random = seededRandom(subSeed(seed, 'plan-C'));
  const slots = Math.floor(scale.size / MiB);
  const wanted = Math.round(slots * scale.dataFraction);
  const chosen = new Uint8Array(slots);
  // runs of 1-16 slots, like files and metadata scattered over a filesystem image
  let filled = 0;
  while (filled < wanted) {
    const start = Math.floor(random() * slots);
    const run = Math.min(1 + Math.floor(random() * 16), wanted - filled, slots - start);
    for (let s = start; s < start + run; s++) {
      if (chosen[s] === 0) {
        chosen[s] = 1;
        filled++;
      }
    }
  }
  const extents: Extent[] = [];
  for (let s = 0; s < slots; s++) {
    if (chosen[s] === 0) continue;
    const last = extents[extents.length - 1];
    if (last && last.offset + last.length === s * MiB) last.length += MiB;
    else extents.push({ offset: s * MiB, length: MiB, content: random() < 0.5 ? 'random' : 'text' });
  }
  return extents;
}

export interface VolumeScale {
  size: number;
  /** fraction of the volume never written (holes); the rest is data, about half of it random, half text */
  holeFraction: number;
}

/**
 * Dataset D: a block volume in use, data written across it: each 1 MiB slot is random, text or (rarely) a hole,
 * neighbours of the same kind joined into one extent.
 */
export function planVolume(seed: number, scale: VolumeScale): Extent[] {
  const random = seededRandom(subSeed(seed, 'plan-D'));
  const extents: Extent[] = [];
  let last: Extent | undefined;
  for (let s = 0; s < Math.floor(scale.size / MiB); s++) {
    const pick = random();
    if (pick < scale.holeFraction) {
      last = undefined;
      continue;
    }
    const content: Content = pick < scale.holeFraction + (1 - scale.holeFraction) / 2 ? 'random' : 'text';
    if (last && last.content === content) last.length += MiB;
    else extents.push((last = { offset: s * MiB, length: MiB, content }));
  }
  return extents;
}
