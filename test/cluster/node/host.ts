// What real nodes change on this host, and putting it back: a kubelet sets kernel sysctls, kube-proxy and the CNI
// bridge add iptables chains and rules, containerd and the kubelet mount (rootfs overlays, netns, tmpfs volumes),
// the kubelet makes cgroups under its cgroupRoot, the bridge plugin makes one bridge per node, and the kubelet
// links container logs into /var/log/containers. `up` records the host as it found it; `down` restores that.

import { execFile } from 'node:child_process';
import { mkdir, readdir, readFile, readlink, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The host's address toward its default route: where pods reach the apiserver, MinIO and the kubelets. */
export async function hostAddress(): Promise<string> {
  // a route lookup only: nothing is sent
  const { stdout } = await run('ip', ['-4', '-json', 'route', 'get', '1.1.1.1']);
  const src = (JSON.parse(stdout) as { prefsrc?: string }[])[0]?.prefsrc;
  if (!src) throw new Error('Real nodes need a host address pods can reach; `ip route get` named no source address');
  return src;
}

// what the kubelet (protectKernelDefaults off), kube-proxy (conntrack, route_localnet) and the bridge plugin
// (forwarding) may set
const sysctls = [
  'vm/overcommit_memory',
  'vm/panic_on_oom',
  'kernel/panic',
  'kernel/panic_on_oops',
  'kernel/keys/root_maxkeys',
  'kernel/keys/root_maxbytes',
  'net/ipv4/ip_forward',
  'net/ipv4/conf/all/route_localnet',
  'net/ipv6/conf/all/forwarding',
  'net/netfilter/nf_conntrack_max',
  'net/bridge/bridge-nf-call-iptables',
  'net/bridge/bridge-nf-call-ip6tables',
];

export async function readSysctls(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of sysctls) {
    const value = await readFile(join('/proc/sys', name), 'utf8').catch(() => undefined);
    if (value !== undefined) out[name] = value.trim();
  }
  return out;
}

export async function restoreSysctls(saved: Record<string, string>): Promise<void> {
  for (const [name, value] of Object.entries(saved)) {
    const now = await readFile(join('/proc/sys', name), 'utf8').catch(() => undefined);
    if (now !== undefined && now.trim() !== value)
      await writeFile(join('/proc/sys', name), value).catch(() => undefined);
  }
}

export type RuleSets = Record<string, string[]>;
const iptablesFamilies = ['iptables', 'ip6tables'] as const;

/** Every table's rules and chain declarations, per family ("iptables:nat" -> iptables-save lines). */
export async function readRules(): Promise<RuleSets> {
  const out: RuleSets = {};
  for (const family of iptablesFamilies) {
    const { stdout } = await run(`${family}-save`).catch(() => ({ stdout: '' }));
    let table = '';
    for (const line of stdout.split('\n')) {
      if (line.startsWith('*')) table = `${family}:${line.slice(1)}`;
      else if (table && (line.startsWith(':') || line.startsWith('-A ')))
        (out[table] ??= []).push(line.replace(/ \[\d+:\d+\]$/, ''));
    }
  }
  return out;
}

// only what Kubernetes and CNI name so: other tools (podman's networks) may change the tables meanwhile
const ours = /KUBE-|CNI-|kubernetes|cni/i;

/** Deletes the rules and chains of Kubernetes and CNI that were not there before, in one iptables-restore per table. */
export async function restoreRules(before: RuleSets): Promise<void> {
  const now = await readRules();
  for (const [key, lines] of Object.entries(now)) {
    const [family, table] = key.split(':');
    const had = new Set(before[key] ?? []);
    const chains = lines
      .filter((l) => l.startsWith(':') && !had.has(l))
      .map((l) => l.slice(1).split(' ')[0])
      .filter((c) => ours.test(c));
    const rules = lines.filter(
      (l) => l.startsWith('-A ') && !had.has(l) && ours.test(l) && !chains.includes(l.split(' ')[1]),
    );
    if (!chains.length && !rules.length) continue;
    const input = [
      `*${table}`,
      ...rules.map((r) => `-D ${r.slice(3)}`),
      ...chains.map((c) => `-F ${c}`),
      ...chains.map((c) => `-X ${c}`),
      'COMMIT',
      '',
    ].join('\n');
    await new Promise<void>((resolve, reject) => {
      const child = execFile(`${family}-restore`, ['--noflush'], (err) =>
        err ? reject(new Error(`${family}-restore of ${table}: ${err.message}`)) : resolve(),
      );
      child.stdin?.end(input);
    });
  }
}

/** The cgroup hierarchies a kubelet with the cgroupfs driver writes to (every v1 controller, and v2's). */
async function hierarchies(): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  return text
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => {
      const type = f[f.indexOf('-') + 1];
      return type === 'cgroup' || type === 'cgroup2';
    })
    .map((f) => f[4]);
}

/** The kubelet wants its cgroupRoot in every hierarchy; cpuset's needs cpus and mems before a task may join. */
export async function makeCgroupRoot(name: string): Promise<void> {
  for (const h of await hierarchies()) {
    const dir = join(h, name);
    await mkdir(dir, { recursive: true });
    for (const file of ['cpuset.cpus', 'cpuset.mems']) {
      const parent = await readFile(join(h, file), 'utf8').catch(() => undefined);
      if (parent !== undefined) await writeFile(join(dir, file), parent.trim());
    }
  }
}

/** Kills what is left in the cgroupRoot (nothing, after a clean stop) and removes its cgroups, deepest first. */
export async function removeCgroupRoot(name: string): Promise<void> {
  for (const h of await hierarchies()) {
    const root = join(h, name);
    const dirs = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => undefined);
    if (!dirs) continue;
    const all = [root, ...dirs.filter((d) => d.isDirectory()).map((d) => join(d.parentPath, d.name))].sort(
      (a, b) => b.length - a.length,
    );
    for (const dir of all) {
      const pids = (await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
      for (const pid of pids)
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          /* gone already */
        }
    }
    for (const dir of all) {
      for (let attempt = 0; attempt < 50; attempt++) {
        const err = await rmdir(dir).then(
          () => undefined,
          (e: NodeJS.ErrnoException) => e,
        );
        if (!err || err.code === 'ENOENT') break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }
}

/** Mount points below dir, deepest first (mountinfo escapes spaces and such as octal). */
async function mountsUnder(dir: string): Promise<string[]> {
  const text = await readFile('/proc/self/mountinfo', 'utf8');
  return text
    .split('\n')
    .map((l) => l.split(' ')[4])
    .filter(Boolean)
    .map((p) => p.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

export async function unmountUnder(dir: string): Promise<void> {
  for (const mount of await mountsUnder(dir)) await run('umount', ['--lazy', mount]).catch(() => undefined);
}

async function linkExists(name: string): Promise<boolean> {
  return run('ip', ['link', 'show', name]).then(
    () => true,
    () => false,
  );
}

export async function deleteLink(name: string): Promise<void> {
  if (await linkExists(name)) await run('ip', ['link', 'delete', name]);
}

/** Processes whose command line names path (containerd's shims carry their containerd's socket). */
export async function processesNaming(path: string): Promise<number[]> {
  const out: number[] = [];
  for (const pid of (await readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const argv = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (argv.split('\0').includes(path)) out.push(Number(pid));
  }
  return out;
}

const containerLogLinks = '/var/log/containers';

// folders a kubelet or CNI makes whatever it is told: the device-plugin socket (/var/lib/kubelet/device-plugins),
// libcni's result cache, the container log links, containerd's shim sockets
const fixedDirs = ['/var/lib/kubelet', '/var/lib/cni', containerLogLinks, '/run/containerd'];

export async function absentDirs(): Promise<string[]> {
  const out: string[] = [];
  for (const dir of fixedDirs)
    if (
      !(await readdir(dir).then(
        () => true,
        () => false,
      ))
    )
      out.push(dir);
  return out;
}

/** Removes the fixed folders the nodes made (recorded as absent at `up`). */
export async function removeDirs(dirs: string[]): Promise<void> {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
}

/** The kubelet links each container's log into /var/log/containers whatever its root; ours point into dir. */
export async function removeLogLinks(dir: string): Promise<void> {
  for (const name of await readdir(containerLogLinks).catch(() => [] as string[])) {
    const target = await readlink(join(containerLogLinks, name)).catch(() => '');
    if (target.startsWith(`${dir}/`)) await rm(join(containerLogLinks, name), { force: true });
  }
}
