// --timeout: spec.operationTimeout, a Go duration as the steps read it; checked here so a typo is bad usage.
import { parseDuration } from '../../shared/api/duration.ts';
import { UsageError } from '../run.ts';

export function operationTimeout(value: string): string {
  let ms: number | undefined;
  try {
    ms = parseDuration(value);
  } catch {
    ms = undefined;
  }
  if (ms === undefined || ms <= 0)
    throw new UsageError(`--timeout "${value}" is not a duration above zero (examples: 90s, 10m, 1h30m)`);
  return value;
}
