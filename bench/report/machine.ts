// The machine a run was measured on, written beside every result: figures mean little without it.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os';
import { promisify } from 'node:util';

export interface Machine {
  cpu: string;
  cores: number;
  memoryBytes: number;
  kernel: string;
  node: string;
  /** load averages (1, 5, 15 min) when the run started: other work on a shared machine skews every figure */
  loadAtStart: number[];
  disk: string;
  versions: Record<string, string>;
  /** whether the VM's free page reporting was paused for the run (measure/page-reporting.ts); absent in older runs */
  pageReporting?: string;
}

async function diskOf(dir: string): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('df', ['-hT', dir]);
    const fields = stdout.trim().split('\n').pop()!.split(/\s+/);
    return `${fields[0]} ${fields[1]}, ${fields[4]} free of ${fields[2]}`;
  } catch {
    return 'unknown';
  }
}

async function cpuModel(): Promise<string> {
  const info = await readFile('/proc/cpuinfo', 'utf8').catch(() => '');
  return /model name\s*:\s*(.+)/.exec(info)?.[1]?.trim() ?? cpus()[0]?.model ?? 'unknown';
}

export async function describeMachine(dir: string, versions: Record<string, string>): Promise<Machine> {
  return {
    cpu: await cpuModel(),
    cores: availableParallelism(),
    memoryBytes: totalmem(),
    kernel: release(),
    node: process.version,
    loadAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
    disk: await diskOf(dir),
    versions,
  };
}
