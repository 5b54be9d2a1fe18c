// --retry-lock, and how a repo command's operation locks: restic's flag, waiting (and saying so) while another
// process holds a conflicting lock, and stopping cleanly on SIGINT or SIGTERM so the lock is removed.
import type { ArgsDef } from 'citty';
import { consola } from '../console.ts';
import type { LockingOptions } from '../../engine/operations/locked.ts';
import { parseDuration } from '../../shared/api/duration.ts';
import { UsageError } from '../run.ts';
import { signalFromProcess } from './common.ts';

export const lockArgs = {
  'retry-lock': {
    type: 'string',
    description: 'wait up to this long for a lock another process holds, e.g. 5m (default: fail at once)',
    valueHint: 'DURATION',
  },
} as const satisfies ArgsDef;

export function locking(args: { 'retry-lock'?: string }): LockingOptions & { signal: AbortSignal } {
  return { signal: signalFromProcess(), lockWaitMs: retryLock(args['retry-lock']), onLockWait: (m) => consola.info(m) };
}

function retryLock(value: string | undefined): number | undefined {
  let ms: number | undefined;
  try {
    ms = parseDuration(value);
  } catch {
    ms = -1;
  }
  if (ms !== undefined && ms < 0)
    throw new UsageError(`--retry-lock "${value}" is not a duration (examples: 30s, 5m, 1h)`);
  return ms;
}
