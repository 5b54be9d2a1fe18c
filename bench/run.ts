// `npm run bench` (issue 7's full suite) and `npm run bench -- --quick` (the same operations on small datasets):
// generates or reuses the datasets, measures ferry and its peers on both targets, alternating them, and writes
// bench/results/bench-<scale>-<time>.json and .md (and latest-<scale>.md, the table the README points at).
import { mkdir, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { parseConfig, usage } from './config.ts';
import type { BenchConfig } from './config.ts';
import { ensureDataset } from './dataset/datasets.ts';
import type { Dataset } from './dataset/datasets.ts';
import { runKernels } from './kernels.ts';
import type { KernelResult } from './kernels.ts';
import { describeMachine } from './report/machine.ts';
import { pausePageReporting } from './measure/page-reporting.ts';
import { warm } from './measure/warm.ts';
import { renderMarkdown } from './report/markdown.ts';
import type { Report } from './report/markdown.ts';
import { summarize } from './report/summarize.ts';
import { ferryPeer } from './peers/ferry.ts';
import { kopiaPeer } from './peers/kopia.ts';
import type { Peer, PeerName } from './peers/peer.ts';
import { resticPeer } from './peers/restic.ts';
import { runScenario } from './scenario.ts';
import type { OpResult } from './scenario.ts';
import { localTarget, minioTarget } from './targets.ts';
import type { Target } from './targets.ts';

const log = (message: string): void => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);

async function loadPeers(names: PeerName[]): Promise<Peer[]> {
  const peers: Peer[] = [];
  // ferry first: each repetition runs ferry, then every peer, so ferry and each peer alternate
  for (const name of names.includes('ferry') ? ['ferry', ...names.filter((n) => n !== 'ferry')] : names) {
    if (name === 'ferry') peers.push(ferryPeer);
    else if (name === 'restic') peers.push(await resticPeer());
    else if (name === 'kopia') peers.push(await kopiaPeer());
  }
  return peers;
}

async function openTargets(config: BenchConfig): Promise<Target[]> {
  const targets: Target[] = [];
  for (const name of config.targets) {
    targets.push(
      name === 'local' ? localTarget(join(config.dir, 'repos')) : await minioTarget(join(config.dir, 'minio')),
    );
  }
  return targets;
}

async function writeReport(config: BenchConfig, report: Report, datasets: Dataset[], stamp: string): Promise<string> {
  await mkdir(config.results, { recursive: true });
  const image = datasets.find((d) => d.id === 'C');
  const imageData = image?.extents.reduce((n, e) => n + e.length, 0);
  const base = join(config.results, `bench-${config.scaleName}-${stamp}`);
  await writeFile(`${base}.json`, JSON.stringify(report, null, 2) + '\n');
  const md = renderMarkdown(report, imageData);
  await writeFile(`${base}.md`, md);
  await writeFile(join(config.results, `latest-${config.scaleName}.md`), md);
  return base;
}

async function main(): Promise<void> {
  if (process.argv.includes('--help')) {
    console.log(usage);
    return;
  }
  const config = parseConfig(process.argv.slice(2));
  const startedAt = new Date();
  const stamp = startedAt.toISOString().slice(0, 19).replace(/[:]/g, '-');
  const started = performance.now();
  log(
    `scale ${config.scaleName}, ${config.reps} repetitions, peers ${config.peers.join(', ')}, targets ${config.targets.join(', ')}, data in ${config.dir}`,
  );
  const reporting = await pausePageReporting();
  process.once('exit', reporting.resume);
  // an interrupted run puts the machine back too (a signal's default action skips 'exit' handlers)
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      reporting.resume();
      process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
    });
  }
  log(reporting.state);
  const peers = await loadPeers(config.peers);
  const versions: Record<string, string> = {};
  for (const p of peers) versions[p.name] = await p.version();
  const datasets: Dataset[] = [];
  for (const id of config.datasets) {
    datasets.push(
      await ensureDataset(id, config.scaleName, config.seed, config.scales, join(config.dir, 'datasets'), log),
    );
  }
  const machine = { ...(await describeMachine(config.dir, versions)), pageReporting: reporting.state };
  let kernels: KernelResult[] = [];
  if (config.kernels) {
    const a = datasets.find((d) => d.id === 'A');
    const largest = a?.plan.reduce((x, y) => (y.size > x.size ? y : x));
    const readFile = a && largest ? join(a.path, largest.path) : undefined;
    const copy = a ? { path: a.path, bytes: a.bytes, files: a.files, work: join(config.dir, 'work') } : undefined;
    kernels = await runKernels({ readFile, copy, dir: config.dir, seconds: config.quick ? 1 : 3, log });
  }
  const targets = await openTargets(config);
  const results: OpResult[] = [];
  const report = (): Report => ({
    scale: config.scaleName,
    started: startedAt.toISOString(),
    seconds: (performance.now() - started) / 1000,
    machine,
    datasets: datasets.map((d) => ({ name: d.name, describe: d.describe, bytes: d.bytes, files: d.files })),
    reps: config.reps,
    summaries: summarize(results),
    results,
    kernels,
    loadAtEnd: loadavg().map((l) => Math.round(l * 100) / 100),
  });
  try {
    const ctx = {
      seed: config.seed,
      changeFraction: config.changeFraction,
      changePlaces: config.changePlaces,
      timeoutSeconds: config.timeoutSeconds,
      log,
    };
    for (const dataset of datasets) {
      for (const target of targets) {
        const warmStarted = performance.now();
        const warmed = warm(dataset.path);
        log(
          `${dataset.name}: read ${(warmed / 2 ** 20).toFixed(0)} MiB into the page cache in ${((performance.now() - warmStarted) / 1000).toFixed(1)} s`,
        );
        for (let rep = 1; rep <= config.reps; rep++) {
          for (const peer of peers) {
            results.push(...(await runScenario(ctx, dataset, peer, target, rep, join(config.dir, 'work'))));
            // partial results survive an interrupted run
            await writeReport(config, report(), datasets, stamp);
          }
        }
      }
    }
  } finally {
    for (const t of targets) await t.close();
  }
  const base = await writeReport(config, report(), datasets, stamp);
  log(`wrote ${base}.json and .md`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
