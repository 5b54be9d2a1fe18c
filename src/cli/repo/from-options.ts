// The flags naming a second repository to read from, restic's `--from-*` (copy reads its snapshots, init its chunker
// polynomial): never opened with the password of the repository the command works on.
import type { ArgsDef } from 'citty';
import type { Repository } from '../../engine/operations/open.ts';
import { locationFor, openNamed, type RepoSide } from './options.ts';

const fromSide: RepoSide = {
  what: 'source repository',
  repoFlag: '--from-repo',
  repoEnv: 'FERRY_FROM_REPOSITORY',
  passwordFlag: '--from-password-file',
  passwordEnv: 'FERRY_FROM_PASSWORD',
};

export const fromRepoArgs = {
  'from-repo': {
    type: 'string',
    description: 'source repository: a directory or s3: location (env FERRY_FROM_REPOSITORY)',
    valueHint: 'LOCATION',
  },
  'from-password-file': {
    type: 'string',
    description: 'file holding the source repository password (env FERRY_FROM_PASSWORD holds it directly)',
    valueHint: 'FILE',
  },
  'from-cacert': {
    type: 'string',
    description: 'PEM file with the CA of the source S3 endpoint (default: --cacert)',
    valueHint: 'FILE',
  },
  'from-recover-versions': {
    type: 'boolean',
    description: "read the source from its Object Lock bucket's object versions, past deleted and overwritten objects",
    default: false,
  },
} as const satisfies ArgsDef;

export interface FromRepoFlags {
  'from-repo'?: string;
  'from-password-file'?: string;
  'from-cacert'?: string;
  'from-recover-versions'?: boolean;
  cacert?: string;
}

/** The source's location, from --from-repo or FERRY_FROM_REPOSITORY. */
export function fromLocation(flags: FromRepoFlags): string {
  return locationFor(flags['from-repo'], fromSide);
}

export function openFrom(flags: FromRepoFlags): Promise<Repository> {
  return openNamed(
    {
      location: fromLocation(flags),
      passwordFile: flags['from-password-file'],
      cacert: flags['from-cacert'] ?? flags.cacert,
      recoverVersions: flags['from-recover-versions'],
    },
    fromSide,
    'from-',
  );
}
