// Runs the real restic (built from its pinned Go module) against a repository, as the independent oracle.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { toolPath } from './tools.ts';
import { testPassword } from './repo.ts';

const run = promisify(execFile);

export interface ResticEnv {
  repo: string;
  password?: string;
  /** extra environment, e.g. AWS credentials for an S3 repository */
  env?: Record<string, string>;
}

export async function restic(target: ResticEnv, args: string[]): Promise<string> {
  const bin = await toolPath('restic');
  try {
    const { stdout } = await run(bin, ['-r', target.repo, '--no-cache', ...args], {
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        RESTIC_PASSWORD: target.password ?? testPassword,
        ...target.env,
      },
      maxBuffer: 256 << 20,
    });
    return stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`restic ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
  }
}

export async function resticJSON<T>(target: ResticEnv, args: string[]): Promise<T> {
  const out = await restic(target, [...args, '--json']);
  const lines = out
    .trim()
    .split('\n')
    .filter((l) => l.startsWith('{') || l.startsWith('['));
  return JSON.parse(lines[lines.length - 1]) as T;
}
