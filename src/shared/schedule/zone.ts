// Wall-clock time in an IANA time zone, through Intl (no tz database of our own): what a cron schedule and the
// retention buckets ("one per day") mean by "local time". Pure functions; instants are ms since the epoch.

export interface WallClock {
  year: number;
  /** 1-12 */
  month: number;
  /** 1-31 */
  day: number;
  /** 0-23 */
  hour: number;
  minute: number;
  second: number;
  /** 0 = Sunday ... 6 = Saturday */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
const weekdays: Record<string, number> = { Sun: 0, Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6 };

// IANA names are words joined by '/'; Intl also takes offsets such as "+01:00", which Kubernetes' CronJob does not
const ianaName = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Why `zone` is not a usable IANA time zone name, or undefined when it is. */
export function timeZoneProblem(zone: string): string | undefined {
  if (!ianaName.test(zone)) return `"${zone}" is not an IANA time zone name such as Europe/Berlin or UTC`;
  try {
    formatter(zone);
    return undefined;
  } catch {
    return `"${zone}" is not a time zone known to the IANA time zone database (for example Europe/Berlin, America/New_York, UTC)`;
  }
}

export function wallClock(ms: number, zone: string): WallClock {
  const out: Record<string, number> = {};
  for (const part of formatter(zone).formatToParts(new Date(ms))) {
    if (part.type === 'weekday') out.weekday = weekdays[part.value];
    else if (part.type !== 'literal') out[part.type] = Number(part.value);
  }
  return out as unknown as WallClock;
}

/** ms east of UTC of `zone` at the instant. */
export function offsetAt(ms: number, zone: string): number {
  const w = wallClock(ms, zone);
  const asUTC = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUTC - Math.floor(ms / 1000) * 1000;
}

export interface LocalTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

/**
 * The instant a wall-clock minute in `zone` names: the earlier one when clocks fall back and show it twice,
 * undefined when clocks spring forward over it. Assumes no zone changes its offset twice within a day.
 */
export function instantOf(local: LocalTime, zone: string): number | undefined {
  const asUTC = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  const offsets = new Set([offsetAt(asUTC - 86_400_000, zone), offsetAt(asUTC + 86_400_000, zone)]);
  const found: number[] = [];
  for (const offset of offsets) {
    const t = asUTC - offset;
    const w = wallClock(t, zone);
    if (
      w.year === local.year &&
      w.month === local.month &&
      w.day === local.day &&
      w.hour === local.hour &&
      w.minute === local.minute
    )
      found.push(t);
  }
  return found.length ? Math.min(...found) : undefined;
}

/** ISO 8601 week-numbering year and week (weeks start on Monday; week 1 holds the year's first Thursday). */
export function isoWeek(year: number, month: number, day: number): { year: number; week: number } {
  const date = Date.UTC(year, month - 1, day);
  const isoWeekday = (new Date(date).getUTCDay() + 6) % 7; // Monday 0 ... Sunday 6
  const thursday = new Date(date + (3 - isoWeekday) * 86_400_000);
  const weekYear = thursday.getUTCFullYear();
  const dayOfYear = (thursday.getTime() - Date.UTC(weekYear, 0, 1)) / 86_400_000;
  return { year: weekYear, week: Math.floor(dayOfYear / 7) + 1 };
}
