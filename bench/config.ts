// What a benchmark run covers: the full suite of issue 7, or `--quick`, the same operations on smaller datasets.
import { join } from 'node:path';
import type { DatasetID, DatasetScales } from './dataset/datasets.ts';
import type { PeerName } from './peers/peer.ts';
import type { TargetName } from './targets.ts';

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

export const fullScales: DatasetScales = {
  A: { randomBytes: GiB, randomFileMax: 64 * MiB, textBytes: 512 * MiB, textFileMax: 16 * MiB, smallFiles: 100_000 },
  B: { files: 1_000_000 },
  C: { size: 4 * GiB, dataFraction: 0.25 },
  D: { size: 2 * GiB, holeFraction: 0.1 },
  E: { size: 4 * GiB },
};

export const quickScales: DatasetScales = {
  A: { randomBytes: 128 * MiB, randomFileMax: 16 * MiB, textBytes: 64 * MiB, textFileMax: 4 * MiB, smallFiles: 10_000 },
  B: { files: 20_000 },
  C: { size: 512 * MiB, dataFraction: 0.25 },
  D: { size: 512 * MiB, holeFraction: 0.1 },
  E: { size: GiB },
};

export interface BenchConfig {
  quick: boolean;
  scaleName: 'full' | 'quick';
  scales: DatasetScales;
  /** rounds of ferry, peer, ferry, peer... */
  reps: number;
  seed: number;
  /** datasets, repositories, MinIO data and restores live here */
  dir: string;
  results: string;
  datasets: DatasetID[];
  peers: PeerName[];
  targets: TargetName[];
  /** fraction of dataset A's files, and of dataset D's bytes, changed for the incremental run */
  changeFraction: number;
  /** how many places of dataset D the change is spread over */
  changePlaces: number;
  /** one command may take this long before it is killed and recorded as failed */
  timeoutSeconds: number;
  kernels: boolean;
}

export const usage = `bench/run.ts [--quick] [--reps N] [--seed N] [--datasets A,B,C,D,E] [--peers ferry,restic,kopia]
  [--targets local,minio] [--no-kernels]
Runs the benchmark suite of issue 7 and writes bench/results/bench-<scale>-<time>.{json,md} and latest-<scale>.md.
Data goes under $FERRY_BENCH_DIR (default /work/scratch/bench).`;

function list<T extends string>(value: string, allowed: readonly T[], flag: string): T[] {
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const item of items) {
    if (!allowed.includes(item as T)) throw new Error(`${flag} "${item}" is not one of ${allowed.join(', ')}.`);
  }
  return items as T[];
}

function count(value: string | undefined, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} needs a whole number of at least 1, not "${value}".`);
  return n;
}

export function parseConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const quick = argv.includes('--quick');
  const dir = env.FERRY_BENCH_DIR || '/work/scratch/bench';
  const config: BenchConfig = {
    quick,
    scaleName: quick ? 'quick' : 'full',
    scales: quick ? quickScales : fullScales,
    reps: quick ? 2 : 3,
    seed: 1,
    dir,
    results: join(import.meta.dirname, 'results'),
    datasets: ['A', 'B', 'C', 'D', 'E'],
    peers: ['ferry', 'restic', 'kopia'],
    targets: ['local', 'minio'],
    changeFraction: 0.01,
    changePlaces: 5,
    timeoutSeconds: quick ? 900 : 4 * 3600,
    kernels: true,
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value.`);
      return v;
    };
    if (flag === '--quick') continue;
    else if (flag === '--reps') config.reps = count(value(), flag);
    else if (flag === '--seed') config.seed = count(value(), flag);
    else if (flag === '--datasets') config.datasets = list(value(), ['A', 'B', 'C', 'D', 'E'] as const, flag);
    else if (flag === '--peers') config.peers = list(value(), ['ferry', 'restic', 'kopia'] as const, flag);
    else if (flag === '--targets') config.targets = list(value(), ['local', 'minio'] as const, flag);
    else if (flag === '--no-kernels') config.kernels = false;
    else throw new Error(`Unknown option "${flag}".\n${usage}`);
  }
  return config;
}
