// Duration flags (--timeout, --expire): Go durations as the steps and the dispatcher read them; checked here so a
// typo is bad usage naming the flag.
import { parseDuration } from '../../shared/api/duration.ts';
import { UsageError } from '../run.ts';

export function durationFlag(value: string, flag: string): string {
  let ms: number | undefined;
  try {
    ms = parseDuration(value);
  } catch {
    ms = undefined;
  }
  if (ms === undefined || ms <= 0)
    throw new UsageError(`${flag} "${value}" is not a duration above zero (examples: 90s, 10m, 1h30m, 720h)`);
  return value;
}

/** --timeout: spec.operationTimeout */
export const operationTimeout = (value: string): string => durationFlag(value, '--timeout');
