// Flags every `ferry repo` command shares, and opening the repository they name.
import { readFile } from 'node:fs/promises';
import type { ArgsDef } from 'citty';
import { openRepository, type Repository } from '../../engine/operations/open.ts';
import { openBackend } from '../../engine/operations/storage.ts';
import { UsageError } from '../run.ts';
import { objectLockArgs, objectLockSettings, type ObjectLockFlags } from './object-lock-flags.ts';

export const repoArgs = {
  repo: {
    type: 'string',
    alias: 'r',
    description: 'repository: a directory, or s3:http[s]://HOST[:PORT]/BUCKET[/PREFIX] (env FERRY_REPOSITORY)',
    valueHint: 'LOCATION',
  },
  'password-file': {
    type: 'string',
    description: 'file holding the repository password (env FERRY_PASSWORD holds it directly)',
    valueHint: 'FILE',
  },
  cacert: {
    type: 'string',
    description: 'PEM file with the CA that signed the S3 endpoint certificate',
    valueHint: 'FILE',
  },
  ...objectLockArgs,
  json: { type: 'boolean', description: 'print results as JSON for scripts', default: false },
} as const satisfies ArgsDef;

export interface RepoFlags {
  repo?: string;
  'password-file'?: string;
  cacert?: string;
  'object-lock'?: string;
  'recover-versions'?: boolean;
  json?: boolean;
}

/** How flags and environment name a repository: the one a command works on, or the source a copy reads. */
export interface RepoSide {
  /** as messages call it */
  what: string;
  repoFlag: string;
  repoEnv: string;
  passwordFlag: string;
  passwordEnv: string;
}

export const workedOn: RepoSide = {
  what: 'repository',
  repoFlag: '--repo',
  repoEnv: 'FERRY_REPOSITORY',
  passwordFlag: '--password-file',
  passwordEnv: 'FERRY_PASSWORD',
};

export function repoLocation(flags: RepoFlags): string {
  return locationFor(flags.repo, workedOn);
}

export function readPassword(flags: RepoFlags): Promise<string> {
  return passwordFor(flags['password-file'], workedOn);
}

/** The location given by the side's flag, or else its environment variable. */
export function locationFor(flag: string | undefined, side: RepoSide): string {
  const location = flag ?? process.env[side.repoEnv];
  if (!location) throw new UsageError(`no ${side.what} given: pass ${side.repoFlag} LOCATION or set ${side.repoEnv}`);
  return location;
}

/** The password in the file the side's flag names, or else in its environment variable. */
export async function passwordFor(file: string | undefined, side: RepoSide): Promise<string> {
  if (file) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new UsageError(
        `cannot read ${side.passwordFlag} ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    // like restic: the first line is the password, so a trailing newline from an editor does not count
    return text.split(/\r?\n/)[0];
  }
  const env = process.env[side.passwordEnv];
  if (env !== undefined && env !== '') return env;
  throw new UsageError(`no ${side.what} password: pass ${side.passwordFlag} FILE or set ${side.passwordEnv}`);
}

export function backendFor(flags: RepoFlags) {
  return backendNamed(repoLocation(flags), flags.cacert, lockFlags(flags));
}

export function openRepo(flags: RepoFlags): Promise<Repository> {
  return openNamed(
    { location: flags.repo, passwordFile: flags['password-file'], cacert: flags.cacert, ...lockFlags(flags) },
    workedOn,
  );
}

function lockFlags(flags: RepoFlags): ObjectLockFlags {
  return { objectLock: flags['object-lock'], recoverVersions: flags['recover-versions'] };
}

function backendNamed(location: string, caFile: string | undefined, lock: ObjectLockFlags, flagPrefix = '') {
  return openBackend(location, { s3: { caFile, ...objectLockSettings(lock, location, flagPrefix) } });
}

/** Opens the repository a side's flags (or environment) name; `flagPrefix` is that of the side's flags. */
export async function openNamed(
  given: { location?: string; passwordFile?: string; cacert?: string } & ObjectLockFlags,
  side: RepoSide,
  flagPrefix = '',
): Promise<Repository> {
  // where comes before how to unlock it: without a location the password question is premature
  const backend = backendNamed(locationFor(given.location, side), given.cacert, given, flagPrefix);
  return openRepository(backend, await passwordFor(given.passwordFile, side));
}
