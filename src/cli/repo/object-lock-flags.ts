// The flags of an S3 Object Lock location: --object-lock MODE:PERIOD gives every object written retention (and keeps
// prune and forget off what is retained), --recover-versions reads what the object versions hold after deletions
// and overwrites. Both need an s3: repository; the recovery mode reads only, so it takes no lock policy.
import type { ArgsDef } from 'citty';
import type { ObjectLockPolicy } from '../../engine/operations/storage.ts';
import { parseObjectLock, retentionRule } from '../../shared/api/object-lock.ts';
import { UsageError } from '../run.ts';

export const objectLockArgs = {
  'object-lock': {
    type: 'string',
    description:
      'S3 Object Lock retention for every object written: MODE:PERIOD, MODE governance or compliance, PERIOD such as 30d or 12h (the bucket must have been created with Object Lock)',
    valueHint: 'MODE:PERIOD',
  },
  'recover-versions': {
    type: 'boolean',
    description:
      'read what the object versions of an Object Lock bucket hold, past deleted and overwritten objects (writes nothing)',
    default: false,
  },
} as const satisfies ArgsDef;

export interface ObjectLockFlags {
  objectLock?: string;
  recoverVersions?: boolean;
}

/** The S3 settings the flags ask for on `location`, whose flag names are prefixed with `flagPrefix` ('from-'). */
export function objectLockSettings(
  flags: ObjectLockFlags,
  location: string,
  flagPrefix = '',
): { objectLock?: ObjectLockPolicy; recoverVersions?: boolean } {
  const lockFlag = `--${flagPrefix}object-lock`;
  const recoverFlag = `--${flagPrefix}recover-versions`;
  if (flags.objectLock === undefined && !flags.recoverVersions) return {};
  const used = flags.objectLock !== undefined ? lockFlag : recoverFlag;
  if (!location.startsWith('s3:')) throw new UsageError(`${used} needs an s3: repository, not ${location}`);
  if (flags.objectLock !== undefined && flags.recoverVersions)
    throw new UsageError(`${recoverFlag} only reads: it takes no ${lockFlag}`);
  if (flags.recoverVersions) return { recoverVersions: true };
  return { objectLock: parsePolicy(flags.objectLock ?? '', lockFlag) };
}

function parsePolicy(value: string, flag: string): ObjectLockPolicy {
  const policy = parseObjectLock(value);
  if (!policy) {
    throw new UsageError(
      `${flag} "${value}" must be MODE:PERIOD, MODE governance or compliance, PERIOD ${retentionRule} (examples: governance:30d, compliance:12h)`,
    );
  }
  return policy;
}
