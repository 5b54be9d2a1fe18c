// Which backups a keep-policy keeps, with the semantics of restic's `forget --keep-*`: newest first, each rule
// keeps the newest backup of each of its buckets (hour, day, ISO week, month, year of the backup's local time in
// the schedule's zone; every backup is its own bucket for keepLast) until its count is used up, and also the
// oldest backup while it still has count left; a backup is kept when any rule keeps it. No rule at all keeps
// everything. Pure: no Kubernetes, no repository, the time zone passed in.
import { isoWeek, wallClock } from '../schedule/zone.ts';
import type { WallClock } from '../schedule/zone.ts';
import type { RetentionPolicy } from '../api/types.ts';

/** the rules are the API's own (BackupSchedule.spec.retention): a type only, nothing of Kubernetes comes with it */
export type KeepRules = RetentionPolicy;

export type RuleName = keyof KeepRules;

export interface Dated {
  /** ms since the epoch */
  time: number;
}

export interface RetentionResult<T> {
  /** newest first */
  keep: T[];
  /** newest first */
  remove: T[];
  /** the rules that keep each kept item */
  reasons: Map<T, RuleName[]>;
}

type Bucket = (w: WallClock, index: number) => number;

const buckets: readonly [RuleName, Bucket][] = [
  ['keepLast', (_w, index) => index],
  ['keepHourly', (w) => ((w.year * 100 + w.month) * 100 + w.day) * 100 + w.hour],
  ['keepDaily', (w) => (w.year * 100 + w.month) * 100 + w.day],
  [
    'keepWeekly',
    (w) => {
      const iso = isoWeek(w.year, w.month, w.day);
      return iso.year * 100 + iso.week;
    },
  ],
  ['keepMonthly', (w) => w.year * 100 + w.month],
  ['keepYearly', (w) => w.year],
];

export function isEmptyPolicy(rules: KeepRules): boolean {
  return buckets.every(([name]) => !rules[name]);
}

export function applyRetention<T extends Dated>(
  items: readonly T[],
  rules: KeepRules,
  timeZone: string,
): RetentionResult<T> {
  // stable: items with the same time keep their given order, as restic's sort.Stable does
  const newestFirst = items
    .map((item, i) => ({ item, i }))
    .sort((a, b) => b.item.time - a.item.time || a.i - b.i)
    .map((x) => x.item);
  const reasons = new Map<T, RuleName[]>();
  if (isEmptyPolicy(rules)) {
    for (const item of newestFirst) reasons.set(item, []);
    return { keep: newestFirst, remove: [], reasons };
  }
  const left = buckets.map(([name]) => Math.max(0, rules[name] ?? 0));
  const last: (number | undefined)[] = buckets.map(() => undefined);
  const keep: T[] = [];
  const remove: T[] = [];
  newestFirst.forEach((item, index) => {
    const wall = wallClock(item.time, timeZone);
    const why: RuleName[] = [];
    buckets.forEach(([name, bucket], b) => {
      if (left[b] === 0) return;
      const value = bucket(wall, index);
      if (value !== last[b] || index === newestFirst.length - 1) {
        last[b] = value;
        left[b]--;
        why.push(name);
      }
    });
    if (why.length) {
      keep.push(item);
      reasons.set(item, why);
    } else {
      remove.push(item);
    }
  });
  return { keep, remove, reasons };
}
