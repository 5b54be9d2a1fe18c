// Runs one peer command as a child process under GNU time, so every tool is measured the same way from outside:
// wall time here, user+sys CPU and peak RSS from the kernel's rusage of the child and everything it waited for, and
// on request the bytes it read (the kernel's I/O accounting, which also sums what the children it waited for read).
import { spawn } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';

export interface Command {
  argv: string[];
  env: Record<string, string>;
  /** a file given to the child as its standard input */
  stdinFile?: string;
  cwd?: string;
  /** count the bytes the command's process tree read (ChildFigures.reads) */
  countReads?: boolean;
}

/** /proc/PID/io of a process tree: bytes asked of read calls (page cache included) and fetched from storage. */
export interface ReadFigures {
  /** rchar: every read call's bytes, from files, pipes and sockets alike, cached or not */
  calls: number;
  /** read_bytes: what had to come from the storage layer (near nothing when the page cache holds the data) */
  storage: number;
}

export interface ChildFigures {
  wallSeconds: number;
  cpuSeconds: number;
  userSeconds: number;
  sysSeconds: number;
  maxRssBytes: number;
  exitCode: number | null;
  reads?: ReadFigures;
  /** the last few KiB of its output, for failure messages */
  output: string;
}

const timeBinary = '/usr/bin/time';
const keptOutput = 16 * 1024;

/** GNU time's `-f '%e %U %S %M'` line: elapsed, user, sys seconds and max RSS in KiB. */
export function parseTimeLine(text: string): { userSeconds: number; sysSeconds: number; maxRssBytes: number } {
  const line = text.trim().split('\n').pop() ?? '';
  const fields = line.trim().split(/\s+/).map(Number);
  if (fields.length !== 4 || fields.some((n) => !Number.isFinite(n))) {
    throw new Error(`GNU time wrote "${line}" instead of four numbers (elapsed, user, sys, max RSS).`);
  }
  return { userSeconds: fields[1], sysSeconds: fields[2], maxRssBytes: fields[3] * 1024 };
}

/** The rchar and read_bytes lines of a /proc/PID/io text. */
export function parseIo(text: string): ReadFigures {
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:\\s*(\\d+)$`, 'm').exec(text);
    if (!m) throw new Error(`/proc/PID/io gave no ${name} line: "${text.slice(0, 200)}"`);
    return Number(m[1]);
  };
  return { calls: field('rchar'), storage: field('read_bytes') };
}

/**
 * `argv` under a shell that, once the command ends, copies its own /proc/PID/io to `file`: the kernel adds a child's
 * I/O to its parent's when the parent waits for it, so the shell's figures are the whole tree's (its own are tiny).
 */
function countingReads(argv: string[], file: string): string[] {
  return ['/bin/sh', '-c', '"$@"; s=$?; cat /proc/$$/io >"$0"; exit $s', file, ...argv];
}

export async function measure(cmd: Command, scratch: string, timeoutSeconds: number): Promise<ChildFigures> {
  const dir = await mkdtemp(join(scratch, 'time-'));
  const timeFile = join(dir, 'rusage');
  const ioFile = join(dir, 'io');
  const argv = cmd.countReads ? countingReads(cmd.argv, ioFile) : cmd.argv;
  const stdin = cmd.stdinFile ? openSync(cmd.stdinFile, 'r') : 'ignore';
  try {
    const started = performance.now();
    const child = spawn(timeBinary, ['-f', '%e %U %S %M', '-o', timeFile, ...argv], {
      env: cmd.env,
      cwd: cmd.cwd,
      stdio: [stdin, 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (b: Buffer): void => {
      output = (output + b.toString()).slice(-keptOutput);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutSeconds * 1000);
    const exitCode = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve(code));
    });
    clearTimeout(timer);
    const wallSeconds = (performance.now() - started) / 1000;
    const usage = parseTimeLine(await readFile(timeFile, 'utf8').catch(() => 'missing'));
    const reads = cmd.countReads && exitCode === 0 ? parseIo(await readFile(ioFile, 'utf8')) : undefined;
    return { wallSeconds, cpuSeconds: usage.userSeconds + usage.sysSeconds, ...usage, exitCode, reads, output };
  } finally {
    if (typeof stdin === 'number') closeSync(stdin);
    await rm(dir, { recursive: true, force: true });
  }
}
