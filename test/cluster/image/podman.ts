// podman as the box runs it: Debian's podman with settings that work on a machine without systemd, in a cgroup v1
// hybrid, with hard rlimits lower than podman's defaults (crun 1.8 refuses the hybrid mode; rlimits above the hard
// ones fail setrlimit with EPERM; no journald for events). The settings go in a containers.conf of the cache handed
// over through CONTAINERS_CONF, so the machine's own configuration is left alone.

import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cacheRoot } from '../paths.ts';

export const imageCache = (): string => join(cacheRoot(), 'image');

/** The hard limit of this process for one row of /proc/self/limits ("Max open files", "Max processes"). */
async function hardLimit(row: string): Promise<string> {
  const line = (await readFile('/proc/self/limits', 'utf8')).split('\n').find((l) => l.startsWith(row));
  const hard = line?.slice(row.length).trim().split(/\s+/)[1];
  if (!hard) throw new Error(`/proc/self/limits has no "${row}" row`);
  return hard === 'unlimited' ? '-1' : hard;
}

async function containersConf(): Promise<string> {
  const nofile = await hardLimit('Max open files');
  // runc was refused (EPERM) an nproc above the kernel's pid_max here, and no more processes than pids can exist
  const pidMax = (await readFile('/proc/sys/kernel/pid_max', 'utf8')).trim();
  const hardProcs = await hardLimit('Max processes');
  const nproc = hardProcs === '-1' || Number(hardProcs) > Number(pidMax) ? pidMax : hardProcs;
  const text = [
    '# written by test/cluster/image/podman.ts',
    '[containers]',
    `default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]`,
    '[engine]',
    'runtime = "runc"',
    'cgroup_manager = "cgroupfs"',
    'events_logger = "file"',
    '',
  ].join('\n');
  const path = join(imageCache(), 'containers.conf');
  await mkdir(imageCache(), { recursive: true });
  if ((await readFile(path, 'utf8').catch(() => '')) !== text) await writeFile(path, text);
  return path;
}

export interface RunOptions {
  log?: (line: string) => void;
  /** what a failure says the command was for */
  purpose: string;
}

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, whatever its exit code. */
export function execute(cmd: string, args: string[], env: NodeJS.ProcessEnv, opts: RunOptions): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => {
      err.push(b);
      if (opts.log) for (const line of b.toString().split('\n')) if (line.trim()) opts.log(line);
    });
    child.on('error', (e) =>
      reject(
        new Error(`${opts.purpose}: cannot run ${cmd} (${e.message}); .ci/run installs it from Debian's packages`),
      ),
    );
    child.on('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }),
    );
  });
}

/** Runs a command to its end; resolves with its stdout, rejects with the tail of its stderr. */
export async function runCommand(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: RunOptions,
): Promise<string> {
  const r = await execute(cmd, args, env, opts);
  if (r.code !== 0)
    throw new Error(`${opts.purpose}: ${cmd} ${args.join(' ')} exited with ${r.code}:\n${r.stderr.slice(-8000)}`);
  return r.stdout;
}

/** podman with the box's containers.conf, whatever its exit code. */
export async function podmanResult(args: string[], opts: RunOptions): Promise<Ran> {
  return execute('podman', args, { ...process.env, CONTAINERS_CONF: await containersConf() }, opts);
}

/** podman with the box's containers.conf; stdout of the command. */
export async function podman(args: string[], opts: RunOptions): Promise<string> {
  return runCommand('podman', args, { ...process.env, CONTAINERS_CONF: await containersConf() }, opts);
}

/** Whether podman's storage holds the image. */
export async function imageExists(name: string): Promise<boolean> {
  return (await podmanResult(['image', 'exists', name], { purpose: 'look for an image' })).code === 0;
}
