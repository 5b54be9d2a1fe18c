// Runs `ferry` as a real process, the way a user or a Job runs it, and collects its exit code and output.
// Fault tests also get the child itself so they can kill it mid-operation.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { testPassword } from './repo.ts';

const root = join(import.meta.dirname, '..', '..');
export const nodeBin = join(root, 'node_modules', '.bin', 'node');
export const cliEntry = join(root, 'src', 'entry', 'ferry.mjs');

export interface FerryRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface FerryEnv {
  /** FERRY_PASSWORD; null leaves it unset */
  password?: string | null;
  env?: Record<string, string>;
  /** run this script instead of src/entry/ferry.mjs (a driver that wraps the CLI) */
  entry?: string;
}

export interface FerryChild {
  child: ChildProcess;
  done: Promise<FerryRun>;
}

export function spawnFerry(args: string[], opts: FerryEnv = {}): FerryChild {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...opts.env };
  const password = opts.password === undefined ? testPassword : opts.password;
  if (password !== null) env.FERRY_PASSWORD = password;
  const child = spawn(nodeBin, [opts.entry ?? cliEntry, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (b: Buffer) => {
    stdout += b.toString();
  });
  child.stderr!.on('data', (b: Buffer) => {
    stderr += b.toString();
  });
  const done = new Promise<FerryRun>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done };
}

export function ferry(args: string[], opts: FerryEnv = {}): Promise<FerryRun> {
  return spawnFerry(args, opts).done;
}

/** Runs ferry and insists on exit 0, showing its output otherwise. */
export async function ferryOK(args: string[], opts: FerryEnv = {}): Promise<FerryRun> {
  const r = await ferry(args, opts);
  if (r.code !== 0) throw new Error(`ferry ${args.join(' ')} exited ${r.code ?? r.signal}:\n${r.stderr}${r.stdout}`);
  return r;
}

/** The JSON document a `--json` run printed on stdout. */
export function parseJSON<T>(r: FerryRun): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`ferry printed no JSON document on stdout:\n${r.stdout}\n--- stderr:\n${r.stderr}`);
  }
}

/** A message printed with a stack trace means an error escaped unexplained. */
export function hasStackTrace(text: string): boolean {
  return /^\s+at .*(:\d+:\d+\)?|\(index \d+\))$/m.test(text);
}

/** the arguments of `ferry backup create <name>` of the PVC `pvc` in `namespace` to `location`, then `more` */
export function backupCreateArgs(name: string, pvc: string, namespace: string, location: string, ...more: string[]) {
  return ['backup', 'create', name, '--pvc', pvc, '-n', namespace, '--location', location, ...more];
}

/** the arguments of `ferry location create <name>` on the box's bucket under `prefix`, for `namespaces`, then `more` */
export function locationCreateArgs(
  name: string,
  s3: { endpoint: string; bucket: string },
  prefix: string,
  namespaces: string,
  files: { secretKey: string; password: string },
  ...more: string[]
): string[] {
  return [
    'location',
    'create',
    name,
    '--endpoint',
    s3.endpoint,
    '--bucket',
    s3.bucket,
    '--prefix',
    prefix,
    '--allowed-namespaces',
    namespaces,
    '--secret-key-file',
    files.secretKey,
    '--password-file',
    files.password,
    ...more,
  ];
}
