// Profiles ferry's CLI on a benchmark dataset with V8's sampling profiler (--cpu-prof: the main thread and every
// worker thread) and says where the CPU time goes, by category. Writes bench/results/profile-<op>-<time>.md.
//   ./node_modules/.bin/node bench/profile.ts [--quick] [--dataset A|C] [--minio]
import { spawnSync } from 'node:child_process';
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseConfig } from './config.ts';
import { ensureDataset } from './dataset/datasets.ts';
import type { DatasetID } from './dataset/datasets.ts';
import { benchPassword } from './peers/peer.ts';
import type { Place } from './peers/peer.ts';
import { categorize } from './report/profile-categories.ts';
import type { CpuProfile } from './report/profile-categories.ts';
import { localTarget, minioTarget } from './targets.ts';

const root = join(import.meta.dirname, '..');
const nodeBin = join(root, 'node_modules', '.bin', 'node');
// the command as users and the suite run it: its compile cache and malloc settings shape the profile too
const cli = join(root, 'src', 'entry', 'ferry.mjs');

interface Profiled {
  op: string;
  wallSeconds: number;
  threads: number;
  categories: Map<string, number>;
}

function ferry(place: Place, profileDir: string | undefined, args: string[]): number {
  const location = place.kind === 'local' ? place.dir : `s3:${place.endpoint}/${place.bucket}`;
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    FERRY_PASSWORD: benchPassword,
  };
  if (place.kind === 's3')
    Object.assign(env, { AWS_ACCESS_KEY_ID: place.accessKey, AWS_SECRET_ACCESS_KEY: place.secretKey });
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-dir', profileDir] : [];
  const started = performance.now();
  const r = spawnSync(nodeBin, [...profile, cli, 'repo', ...args, '--repo', location], { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ferry ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-800)}`);
  return (performance.now() - started) / 1000;
}

async function collect(dir: string): Promise<{ threads: number; categories: Map<string, number> }> {
  const categories = new Map<string, number>();
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  for (const f of files) {
    const profile = JSON.parse(await readFile(join(dir, f), 'utf8')) as CpuProfile;
    for (const [cat, ms] of categorize(profile)) categories.set(cat, (categories.get(cat) ?? 0) + ms);
  }
  return { threads: files.length, categories };
}

function table(p: Profiled): string {
  const busy = [...p.categories].filter(([c]) => c !== 'idle').reduce((n, [, ms]) => n + ms, 0);
  const rows = [...p.categories].filter(([c]) => c !== 'idle').sort((a, b) => b[1] - a[1]);
  return [
    `### ${p.op}: ${p.wallSeconds.toFixed(2)} s wall, ${(busy / 1000).toFixed(2)} s busy CPU over ${p.threads} threads (idle excluded)`,
    '',
    '| category | CPU s | share |',
    '|---|--:|--:|',
    ...rows.map(([c, ms]) => `| ${c} | ${(ms / 1000).toFixed(2)} | ${((100 * ms) / busy).toFixed(1)}% |`),
  ].join('\n');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const id = (argv.includes('--dataset') ? argv[argv.indexOf('--dataset') + 1] : 'A') as DatasetID;
  const useMinio = argv.includes('--minio');
  if (!['A', 'B', 'C'].includes(id)) throw new Error(`--dataset "${id}" is not one of A, B, C.`);
  const config = parseConfig(argv.includes('--quick') ? ['--quick'] : []);
  const dataset = await ensureDataset(
    id,
    config.scaleName,
    config.seed,
    config.scales,
    join(config.dir, 'datasets'),
    console.log,
  );
  const target = useMinio ? await minioTarget(join(config.dir, 'minio')) : localTarget(join(config.dir, 'repos'));
  const work = join(config.dir, `profile-${Date.now().toString(36)}`);
  const place = await target.fresh(`profile-${Date.now().toString(36)}`);
  const profiled: Profiled[] = [];
  try {
    ferry(place, undefined, ['init']);
    const backupArgs = id === 'C' ? ['backup', '--stream', 'volume.img', dataset.path] : ['backup', dataset.path];
    const restoreDir = join(work, 'restored');
    const steps: [string, string[]][] = [
      [`backup ${dataset.name}`, backupArgs],
      [`restore ${dataset.name}`, ['restore', 'latest', '--target', restoreDir]],
    ];
    for (const [op, args] of steps) {
      const dir = join(work, op.replace(/\W+/g, '-'));
      await mkdir(dir, { recursive: true });
      const wallSeconds = ferry(place, dir, args);
      profiled.push({ op: `${op} (${target.name})`, wallSeconds, ...(await collect(dir)) });
      console.log(table(profiled[profiled.length - 1]));
    }
  } finally {
    await target.discard(place);
    await target.close();
    await rm(work, { recursive: true, force: true });
  }
  const stamp = new Date().toISOString().slice(0, 19).replace(/:/g, '-');
  const out = join(config.results, `profile-${id}-${config.scaleName}-${target.name}-${stamp}.md`);
  await writeFile(
    out,
    [
      `# Where ferry's CPU time goes (${new Date().toISOString()})`,
      '',
      ...profiled.map(table).flatMap((t) => [t, '']),
    ].join('\n'),
  );
  console.log(`wrote ${out}`);
}

await main();
