// restic's --pack-size, shared by the commands that write packs (backup, copy).
import type { ArgsDef } from 'citty';
import { UsageError } from '../run.ts';

export const packSizeArgs = {
  'pack-size': {
    type: 'string',
    description: 'target size of the pack files in MiB, 1 to 128 (default 16)',
    valueHint: 'MiB',
  },
} as const satisfies ArgsDef;

/** Whole MiB, so a typo cannot make millions of tiny packs. */
export function parsePackSize(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!(n >= 1 && n <= 128)) throw new UsageError(`--pack-size "${v}" must be a whole number of MiB from 1 to 128`);
  return n * 1024 * 1024;
}
