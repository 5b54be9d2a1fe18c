// Starting and stopping a box's real nodes: per node a containerd and a kubelet, one kube-proxy for the host, the
// images imported, and on the way down everything put back as host.ts recorded it.

import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ensureNodeBinaries } from '../build.ts';
import type { Daemon, DaemonSpec } from '../daemons.ts';
import { daemonRunning, stopDaemon } from '../daemons.ts';
import { freePort } from '../ports.ts';
import { kubeProxyDaemon, nodeDaemons, nodeLayout } from './config.ts';
import type { NodeLayout } from './config.ts';
import {
  absentDirs,
  deleteLink,
  makeCgroupRoot,
  processesNaming,
  readRules,
  readSysctls,
  removeCgroupRoot,
  removeDirs,
  removeLogLinks,
  restoreRules,
  restoreSysctls,
  unmountUnder,
} from './host.ts';
import type { RuleSets } from './host.ts';
import { importImages, nodeImages } from './images.ts';

const run = promisify(execFile);

/** What `down` needs to put the host back: recorded in cluster.json at `up`. */
export interface RealNodes {
  hostIP: string;
  nodesDir: string;
  nodes: NodeLayout[];
  sysctls: Record<string, string>;
  rules: RuleSets;
  /** fixed host folders that did not exist before the nodes started */
  absentDirs: string[];
  /** the image archives in every node's containerd */
  imported: string[];
}

export interface NodeStart {
  names: string[];
  nodesDir: string;
  pki: string;
  /** the box's own program (cri-reset, keep-logs) */
  ferrybox: string;
  hostIP: string;
  kubeletPortBase: number;
  launch: (spec: DaemonSpec) => Promise<Daemon>;
  /** the storage driver's Node service for a node whose kubelet keeps its state in kubeletRoot */
  csiNode: (node: string, kubeletRoot: string) => DaemonSpec;
  /** called with the record of what to restore before anything on the host changes */
  recordHost: (real: RealNodes) => Promise<void>;
  log: (line: string) => void;
  phase: (name: string, fn: () => Promise<void>) => Promise<void>;
  /**
   * The second site's nodes join a host the first site's already claimed and serves Services on: they take the
   * bridges after the first site's (`firstIndex`), neither claim the host again nor run a kube-proxy of their own.
   */
  joining?: { firstIndex: number };
}

/** Waits until containerd answers on its socket (its CRI plugin loads with it). */
async function waitContainerd(socket: string, daemonName: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const ok = await run('ctr', ['--address', socket, 'version'], { timeout: 5000 }).then(
      () => true,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${daemonName} did not answer on ${socket} within 60 s; see its log`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

// which box's real nodes this machine runs: their bridges, cgroupRoots and kube-proxy's chains are the host's
const claimFile = '/run/ferrybox-real-nodes';

async function boxRunning(nodesDir: string): Promise<boolean> {
  const raw = await readFile(join(nodesDir, '..', 'cluster.json'), 'utf8').catch(() => undefined);
  if (raw === undefined) return false;
  for (const d of (JSON.parse(raw) as { daemons: Daemon[] }).daemons) if (await daemonRunning(d)) return true;
  return false;
}

/** Claims the host for this box's nodes; what a box that died without `down` left in the way is removed. */
async function claimHost(nodesDir: string, layouts: NodeLayout[]): Promise<void> {
  const holder = (await readFile(claimFile, 'utf8').catch(() => '')).trim();
  if (holder && holder !== nodesDir && (await boxRunning(holder))) {
    throw new Error(
      `Another box with real nodes runs on this machine (${holder}): one at a time, since their bridges, cgroups and Service rules are the host's; \`npm run cluster -- down\` in that checkout first`,
    );
  }
  await writeFile(claimFile, nodesDir);
  for (const n of layouts) {
    await removeCgroupRoot(n.cgroupRoot);
    await deleteLink(n.bridge);
  }
}

export async function startNodes(s: NodeStart): Promise<void> {
  const first = s.joining?.firstIndex ?? 1;
  const layouts = s.names.map((name, i) => nodeLayout(s.nodesDir, name, first + i, s.kubeletPortBase + i));
  let bin = { kubelet: '', 'kube-proxy': '' };
  let images: Awaited<ReturnType<typeof nodeImages>> = [];
  await s.phase('node-build', async () => {
    bin = (await ensureNodeBinaries(s.log)).bin;
    images = await nodeImages(s.log);
  });
  if (!s.joining) await claimHost(s.nodesDir, layouts);
  await s.recordHost({
    hostIP: s.hostIP,
    nodesDir: s.nodesDir,
    nodes: layouts,
    sysctls: await readSysctls(),
    rules: await readRules(),
    absentDirs: await absentDirs(),
    imported: images.map((i) => i.archive),
  });
  const kubelets: DaemonSpec[] = [];
  await s.phase('containerd', async () => {
    const started: [NodeLayout, Daemon][] = [];
    for (const n of layouts) {
      await makeCgroupRoot(n.cgroupRoot);
      const specs = await nodeDaemons(n, bin, s.pki, s.hostIP);
      kubelets.push(specs.kubelet);
      started.push([n, await s.launch(specs.containerd)]);
    }
    for (const [n, d] of started) await waitContainerd(n.socket, d.name);
  });
  await s.phase('images', async () => {
    await Promise.all(layouts.map((n) => importImages(n.socket, images)));
  });
  await s.phase('kubelets', async () => {
    // before any pod runs: the kubelets delete logs with their pods, the tests read them later
    await s.launch({
      name: 'log-keeper',
      binary: s.ferrybox,
      args: ['keep-logs', `--logs=${join(s.nodesDir, 'logs')}`, ...layouts.map((n) => join(n.dir, 'pod-logs'))],
    });
    for (const kubelet of kubelets) await s.launch(kubelet);
    for (const n of layouts) await s.launch(s.csiNode(n.name, join(n.dir, 'kubelet')));
    if (s.joining) return;
    await s.launch(
      await kubeProxyDaemon(s.nodesDir, bin['kube-proxy'], s.pki, s.names[0], s.hostIP, {
        healthz: await freePort(),
        metrics: await freePort(),
      }),
    );
  });
}

/** Imports what changed since (ferry's image after an edit of the sources), so a reused box runs the checkout's
 * code; false when every node has the current images already. */
export async function refreshImages(real: RealNodes, log: (line: string) => void): Promise<boolean> {
  const images = await nodeImages(log);
  const fresh = images.filter((i) => !real.imported.includes(i.archive));
  if (!fresh.length) return false;
  log(`importing ${fresh.map((i) => i.name).join(', ')} into ${real.nodes.map((n) => n.name).join(', ')}`);
  await Promise.all(real.nodes.map((n) => importImages(n.socket, fresh)));
  real.imported = images.map((i) => i.archive);
  return true;
}

/**
 * Stops the kubelets (so nothing restarts pods), empties each containerd through the CRI (CNI teardown, mounts),
 * stops kube-proxy and containerd, then sweeps what a crash may have left: shims, mounts, cgroups, bridges, log
 * links, iptables chains; and restores the sysctls.
 */
export async function stopNodes(
  real: RealNodes,
  daemons: Daemon[],
  ferrybox: string,
  log: (line: string) => void,
): Promise<void> {
  const named = (prefix: string): Daemon[] => daemons.filter((d) => d.name.startsWith(prefix));
  for (const d of named('kubelet-')) await stopDaemon(d, 10_000);
  for (const n of real.nodes) {
    const containerd = daemons.find((d) => d.name === `containerd-${n.name}`);
    if (!containerd) continue;
    log(`removing the pods of ${n.name}`);
    await run(ferrybox, ['cri-reset', `--endpoint=${n.socket}`], { timeout: 150_000 }).catch((err: Error) =>
      log(`cri-reset of ${n.name}: ${err.message.trim()}`),
    );
  }
  for (const d of [...named('kube-proxy'), ...named('containerd-')]) await stopDaemon(d, 10_000);
  for (const n of real.nodes) {
    for (const pid of await processesNaming(n.socket))
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    await unmountUnder(n.dir);
    await removeCgroupRoot(n.cgroupRoot);
    await deleteLink(n.bridge);
    await removeLogLinks(n.dir);
  }
  await restoreRules(real.rules);
  await restoreSysctls(real.sysctls);
  await removeDirs(real.absentDirs);
  if ((await readFile(claimFile, 'utf8').catch(() => '')).trim() === real.nodesDir)
    await rm(claimFile, { force: true });
}
