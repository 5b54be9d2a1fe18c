// The box's long-running processes: started detached (they outlive `npm run cluster -- up`), output appended to
// one log file each, stopped by the pid recorded at start after checking the pid still runs that binary.

import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from './lock.ts';

export interface DaemonSpec {
  name: string;
  binary: string;
  args: string[];
  env?: Record<string, string>;
}

export interface Daemon {
  name: string;
  binary: string;
  pid: number;
  log: string;
}

export function startDaemon(spec: DaemonSpec, logsDir: string): Daemon {
  const log = join(logsDir, `${spec.name}.log`);
  const fd = openSync(log, 'a');
  try {
    const child = spawn(spec.binary, spec.args, {
      detached: true,
      stdio: ['ignore', fd, fd],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/root', ...spec.env },
    });
    if (child.pid === undefined) throw new Error(`${spec.name} could not be started from ${spec.binary}.`);
    child.unref();
    return { name: spec.name, binary: spec.binary, pid: child.pid, log };
  } finally {
    closeSync(fd);
  }
}

/** True while the pid is alive and still runs the daemon's binary (pids are reused). */
export async function daemonRunning(d: Daemon): Promise<boolean> {
  if (!processAlive(d.pid)) return false;
  const exe = await readlink(`/proc/${d.pid}/exe`).catch(() => '');
  const zombie = (await readFile(`/proc/${d.pid}/stat`, 'utf8').catch(() => '')).split(') ')[1]?.startsWith('Z');
  return !zombie && exe.replace(/ \(deleted\)$/, '') === d.binary;
}

/** SIGTERM, then SIGKILL once graceMs has passed; resolves when the process is gone. */
export async function stopDaemon(d: Daemon, graceMs = 10_000): Promise<void> {
  if (!(await daemonRunning(d))) return;
  process.kill(d.pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (await daemonRunning(d)) {
    if (Date.now() > deadline) {
      process.kill(d.pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 200));
      if (!(await daemonRunning(d))) return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The last lines of a daemon's log, for error messages. */
export async function logTail(d: Daemon, lines = 20): Promise<string> {
  const text = await readFile(d.log, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n');
}
