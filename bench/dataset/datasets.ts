// The three datasets of issue 7 (and D and E, issue 34's block volume and single large file), generated once per
// (seed, scale) under the bench folder and reused: a marker file written last says a dataset is complete, so an
// interrupted generation is redone rather than trusted.
import { mkdirSync, openSync, closeSync, ftruncateSync, writeSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { randomBytes, textBytes } from './content.ts';
import { planImage, planMixed, planTiny, planVolume } from './plan.ts';
import type { Extent, ImageScale, MixedScale, PlannedFile, VolumeScale } from './plan.ts';

/** Bump when a generator changes, so cached datasets made by the old one are regenerated. */
const generatorVersion = 2;

export type DatasetID = 'A' | 'B' | 'C' | 'D' | 'E';

/** the datasets that are one block image (a stream to back up) */
export const isImage = (id: DatasetID): boolean => id === 'C' || id === 'D';

export interface DatasetScales {
  A: MixedScale;
  B: { files: number };
  C: ImageScale;
  D: VolumeScale;
  /** one incompressible file of this size in a folder */
  E: { size: number };
}

export interface Dataset {
  id: DatasetID;
  /** e.g. "A-quick-s1": the folder (or image file) name */
  name: string;
  /** a folder for A, B and E, the image file for C and D */
  path: string;
  /** logical bytes: what a backup reads and a restore writes */
  bytes: number;
  files: number;
  /** A, B and E: the files; C and D: none */
  plan: PlannedFile[];
  /** C and D: the data extents; E: its one file's; A and B: none */
  extents: Extent[];
  describe: string;
}

interface Marker {
  name: string;
  version: number;
  bytes: number;
  files: number;
}

const MiB = 1024 * 1024;

function fmt(bytes: number): string {
  return bytes >= 1024 * MiB ? `${(bytes / 1024 / MiB).toFixed(1)} GiB` : `${Math.round(bytes / MiB)} MiB`;
}

export function fileContent(seed: number, file: PlannedFile): Buffer {
  if (file.content === 'random') return randomBytes(seed, file.path, file.size);
  if (file.content === 'text') return textBytes(seed, file.path, file.size);
  const line = `${file.path} ${randomBytes(seed, file.path, 64).toString('hex')}`;
  return Buffer.from(line.padEnd(file.size - 1, '.').slice(0, file.size - 1) + '\n');
}

function extentContent(seed: number, extent: Extent): Buffer {
  const label = `image@${extent.offset}`;
  return extent.content === 'random' ? randomBytes(seed, label, extent.length) : textBytes(seed, label, extent.length);
}

function writeTree(root: string, seed: number, plan: PlannedFile[]): void {
  let lastDir = '';
  for (const file of plan) {
    const path = join(root, file.path);
    const dir = dirname(path);
    if (dir !== lastDir) {
      mkdirSync(dir, { recursive: true });
      lastDir = dir;
    }
    writeFileSync(path, fileContent(seed, file));
  }
}

function writeImage(path: string, seed: number, size: number, extents: Extent[]): void {
  const fd = openSync(path, 'w');
  try {
    ftruncateSync(fd, size);
    for (const extent of extents) {
      // in 16 MiB pieces so long runs never need one huge buffer
      for (let done = 0; done < extent.length; done += 16 * MiB) {
        const piece = { ...extent, offset: extent.offset + done, length: Math.min(16 * MiB, extent.length - done) };
        const bytes = extentContent(seed, piece);
        writeSync(fd, bytes, 0, bytes.length, piece.offset);
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** E's one file, in its folder */
const largeFile = 'large.bin';

/** The dataset's layout from the seed; nothing is written. */
export function planDataset(id: DatasetID, name: string, dir: string, seed: number, scales: DatasetScales): Dataset {
  if (isImage(id)) {
    const size = id === 'C' ? scales.C.size : scales.D.size;
    const extents = id === 'C' ? planImage(seed, scales.C) : planVolume(seed, scales.D);
    const data = extents.reduce((n, e) => n + e.length, 0);
    const what = id === 'C' ? 'sparse block image' : 'block volume';
    return {
      id,
      name,
      path: join(dir, `${name}.img`),
      bytes: size,
      files: 1,
      plan: [],
      extents,
      describe: `${fmt(size)} ${what}, ${fmt(data)} of data in ${extents.length} extents (half random, half text)`,
    };
  }
  if (id === 'E') {
    const size = scales.E.size;
    return {
      id,
      name,
      path: join(dir, name),
      bytes: size,
      files: 1,
      plan: [{ path: largeFile, size, content: 'random' }],
      extents: [{ offset: 0, length: size, content: 'random' }],
      describe: `one incompressible file of ${fmt(size)}`,
    };
  }
  const plan = id === 'A' ? planMixed(seed, scales.A) : planTiny(scales.B.files);
  const bytes = plan.reduce((n, f) => n + f.size, 0);
  const describe =
    id === 'A'
      ? `mixed ${fmt(bytes)}: ${fmt(scales.A.randomBytes)} incompressible in files of 1-${scales.A.randomFileMax / MiB} MiB, ` +
        `${fmt(scales.A.textBytes)} text/JSON, ${scales.A.smallFiles} small files of 1-16 KiB in a deep tree`
      : `${plan.length} files of 100 bytes`;
  return { id, name, path: join(dir, name), bytes, files: plan.length, plan, extents: [], describe };
}

async function readMarker(path: string): Promise<Marker | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as Marker;
  } catch {
    return undefined;
  }
}

/** The dataset under `dir`, generated first unless a complete copy from the same generator is there. */
export async function ensureDataset(
  id: DatasetID,
  scaleName: string,
  seed: number,
  scales: DatasetScales,
  dir: string,
  log: (message: string) => void,
): Promise<Dataset> {
  const name = `${id}-${scaleName}-s${seed}`;
  const dataset = planDataset(id, name, dir, seed, scales);
  const markerPath = join(dir, `${name}.done.json`);
  const marker = await readMarker(markerPath);
  if (marker && marker.version === generatorVersion && marker.bytes === dataset.bytes && marker.files === dataset.files)
    return dataset;
  log(`generating dataset ${name}: ${dataset.describe}`);
  const started = performance.now();
  await rm(markerPath, { force: true });
  await rm(dataset.path, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  if (isImage(id)) writeImage(dataset.path, seed, dataset.bytes, dataset.extents);
  else if (id === 'E') {
    // written in pieces, as an image is: fileContent would hold the whole file in memory
    await mkdir(dataset.path);
    writeImage(join(dataset.path, largeFile), seed, dataset.bytes, dataset.extents);
  } else writeTree(dataset.path, seed, dataset.plan);
  const done: Marker = { name, version: generatorVersion, bytes: dataset.bytes, files: dataset.files };
  await writeFile(markerPath, JSON.stringify(done));
  log(`generated ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return dataset;
}
