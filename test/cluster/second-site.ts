// The box's second site: another cluster on the same host, for what must survive losing the first (copies of
// backups restored elsewhere). Its own etcd, apiserver, controllers, storage driver, MinIO (own keys, and a bucket
// with S3 Object Lock) and one real node, started on demand next to a running box and stopped with it.
//
// The host serves one set of Service rules, kube-proxy's for the first site. The second site's apiserver therefore
// calls webhooks at their endpoints (aggregator routing), and one rule of the box's own routes its `kubernetes`
// Service address to it, so its pods reach their apiserver as in any cluster.

import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureBinaries } from './build.ts';
import { createBucket, readRecord, startSite, startSteps, problems } from './box.ts';
import type { BoxRecord, S3Settings } from './box.ts';
import type { Daemon } from './daemons.ts';
import { stopDaemon } from './daemons.ts';
import { withLock } from './lock.ts';
import { statePaths } from './paths.ts';
import type { StatePaths } from './paths.ts';
import { allocatePorts } from './ports.ts';
import type { Ports } from './ports.ts';
import { stopNodes } from './node/nodes.ts';
import type { RealNodes } from './node/nodes.ts';

const run = promisify(execFile);

export interface SecondSite {
  startedAt: string;
  server: string;
  kubeconfig: string;
  pki: string;
  nodes: string[];
  ports: Ports;
  /** MinIO of the second site: its own keys; `lockedBucket` was created with S3 Object Lock */
  s3: S3Settings & { lockedBucket: string };
  daemons: Daemon[];
  realNodes?: RealNodes;
  timings: Record<string, number>;
}

const keys = { accessKey: 'ferrybox-site-b', secretKey: 'ferrybox-site-b-secret-key' };
const serviceAddress = '10.0.1.1';
const routeChain = 'KUBE-FERRYBOX-SECOND-SITE';

// short: the kubelet's plugin registration socket lives below these, and a unix socket path has at most 107 bytes
// (the second site's is then no longer than the first site's)
export function secondSitePaths(first: StatePaths = statePaths()): StatePaths {
  return statePaths(join(first.root, 'b'));
}

/** Starts the second site next to the running box, or returns it when it runs. */
export async function upSecondSite(log: (line: string) => void = () => {}): Promise<SecondSite> {
  const first = statePaths();
  return withLock(first.lock, 30 * 60_000, async () => {
    const record = await readRecord(first);
    if (!record) throw new Error('The second site joins a running box: start the box first (`npm run cluster -- up`).');
    if (record.secondSite && (await problems(record, first)).length === 0) return record.secondSite;
    if (record.secondSite) await stopSecondSite(record.secondSite, record.ferrybox, log);
    const site = await startSecondSite(record, first, log);
    record.secondSite = site;
    await writeFile(first.record, JSON.stringify(record, null, 2));
    return site;
  });
}

async function startSecondSite(record: BoxRecord, first: StatePaths, log: (line: string) => void): Promise<SecondSite> {
  const paths = secondSitePaths(first);
  await run('rm', ['-rf', paths.root]);
  for (const dir of [paths.pki, paths.etcd, paths.logs, paths.minio, paths.nodes, paths.storage])
    await mkdir(dir, { recursive: true });
  const b = await ensureBinaries(log);
  const ports = await allocatePorts(1);
  const hostIP = record.realNodes?.hostIP;
  if (!hostIP) throw new Error('The running box has no real nodes recorded; restart it with `npm run cluster -- up`.');
  const site: SecondSite = {
    startedAt: new Date().toISOString(),
    server: `https://127.0.0.1:${ports.apiserver}`,
    kubeconfig: paths.kubeconfig,
    pki: paths.pki,
    nodes: ['b-1'],
    ports,
    s3: {
      endpoint: `http://${hostIP}:${ports.minio}`,
      region: 'us-east-1',
      bucket: 'ferry',
      lockedBucket: 'ferry-locked',
      ...keys,
    },
    daemons: [],
    timings: {},
  };
  // saved under the first site's record as soon as anything runs, so `down` stops a half-started second site
  const save = async (): Promise<void> => {
    record.secondSite = site;
    await writeFile(first.record, JSON.stringify(record, null, 2));
  };
  const steps = startSteps(paths, site.timings, site.daemons, save, (line) => log(`second site: ${line}`));
  try {
    await startSite(
      {
        paths,
        b,
        settings: { nodes: 1, snapshotReadyDelay: '0s', s3: keys },
        site: 'second',
        hostIP,
        ports,
        server: site.server,
        nodes: site.nodes,
        s3: site.s3,
      },
      steps,
      {
        recordHost: async (real) => {
          site.realNodes = real;
          await save();
        },
        joining: { firstIndex: record.nodes.length + 1 },
      },
    );
    await routeService(hostIP, ports.apiserver);
    await createBucket(site.s3, site.s3.lockedBucket, true);
    return site;
  } catch (err) {
    await stopSecondSite(site, record.ferrybox, log);
    throw err;
  }
}

/** The second site's `kubernetes` Service address, routed to its apiserver (what its kube-proxy would do). */
async function routeService(hostIP: string, port: number): Promise<void> {
  const nat = (...args: string[]): Promise<unknown> => run('iptables', ['-w', '-t', 'nat', ...args]);
  await nat('-N', routeChain);
  await nat(
    '-A',
    routeChain,
    '-d',
    `${serviceAddress}/32`,
    '-p',
    'tcp',
    '--dport',
    '443',
    '-j',
    'DNAT',
    '--to-destination',
    `${hostIP}:${port}`,
  );
  for (const chain of ['PREROUTING', 'OUTPUT']) await nat('-A', chain, '-j', routeChain);
}

/** Stops the second site: its node first (its pods, bridge, cgroups, the rules it added), then its control plane. */
export async function stopSecondSite(site: SecondSite, ferrybox: string, log: (line: string) => void): Promise<void> {
  if (site.realNodes) await stopNodes(site.realNodes, site.daemons, ferrybox, log);
  for (const d of [...site.daemons].reverse()) {
    log(`stopping the second site's ${d.name}`);
    await stopDaemon(d, 5_000);
  }
}
