// S3 Object Lock settings as users write them: a mode and a retention period ("30d", "720h", "90s"). One rule for
// the CLI's --object-lock MODE:PERIOD and a location's spec.objectLock, so both refuse the same values.
import type { ObjectLockPolicy } from '../../engine/operations/storage.ts';
import { parseDuration } from './duration.ts';

const day = 24 * 3600_000;
/** S3 takes a retain-until date; past a hundred years a period is a typo, not a policy. */
export const maxRetentionDays = 36500;

export const retentionRule = `from 1s to ${maxRetentionDays}d`;

/** Whole days (30d) or a Go duration (12h, 90s), in milliseconds; undefined for anything else or out of range. */
export function retentionMs(text: string): number | undefined {
  const days = /^(\d+)d$/i.exec(text);
  let ms: number | undefined;
  if (days) ms = Number(days[1]) * day;
  else {
    try {
      ms = parseDuration(text);
    } catch {
      return undefined;
    }
  }
  return ms !== undefined && ms >= 1000 && ms <= maxRetentionDays * day ? ms : undefined;
}

/** MODE:PERIOD, the mode governance or compliance in any case; undefined when it is not one. */
export function parseObjectLock(value: string): ObjectLockPolicy | undefined {
  const m = /^(governance|compliance):(.+)$/i.exec(value);
  const ms = m ? retentionMs(m[2]) : undefined;
  if (!m || ms === undefined) return undefined;
  return { mode: m[1].toUpperCase() as ObjectLockPolicy['mode'], retentionMs: ms };
}
