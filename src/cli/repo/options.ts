// Flags every `ferry repo` command shares, and opening the repository they name.
import { readFile } from 'node:fs/promises';
import type { ArgsDef } from 'citty';
import { openRepository, type Repository } from '../../engine/operations/open.ts';
import { openBackend } from '../../engine/operations/storage.ts';
import { UsageError } from '../run.ts';

export const repoArgs = {
  repo: { type: 'string', alias: 'r', description: 'repository: a directory, or s3:http[s]://HOST[:PORT]/BUCKET[/PREFIX] (env FERRY_REPOSITORY)', valueHint: 'LOCATION' },
  'password-file': { type: 'string', description: 'file holding the repository password (env FERRY_PASSWORD holds it directly)', valueHint: 'FILE' },
  cacert: { type: 'string', description: 'PEM file with the CA that signed the S3 endpoint certificate', valueHint: 'FILE' },
  json: { type: 'boolean', description: 'print results as JSON for scripts', default: false },
} as const satisfies ArgsDef;

export interface RepoFlags {
  repo?: string;
  'password-file'?: string;
  cacert?: string;
  json?: boolean;
}

export function repoLocation(flags: RepoFlags): string {
  const location = flags.repo ?? process.env.FERRY_REPOSITORY;
  if (!location) throw new UsageError('no repository given: pass --repo LOCATION or set FERRY_REPOSITORY');
  return location;
}

export async function readPassword(flags: RepoFlags): Promise<string> {
  if (flags['password-file']) {
    let text: string;
    try {
      text = await readFile(flags['password-file'], 'utf8');
    } catch (err) {
      throw new UsageError(`cannot read --password-file ${flags['password-file']}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    // like restic: the first line is the password, so a trailing newline from an editor does not count
    return text.split(/\r?\n/)[0];
  }
  const env = process.env.FERRY_PASSWORD;
  if (env !== undefined && env !== '') return env;
  throw new UsageError('no repository password: pass --password-file FILE or set FERRY_PASSWORD');
}

export function backendFor(flags: RepoFlags) {
  return openBackend(repoLocation(flags), { s3: { caFile: flags.cacert } });
}

export async function openRepo(flags: RepoFlags): Promise<Repository> {
  // where comes before how to unlock it: without a location the password question is premature
  const backend = backendFor(flags);
  return openRepository(backend, await readPassword(flags));
}
