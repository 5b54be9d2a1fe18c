// Standard five-field cron (minute hour day-of-month month day-of-week), as Kubernetes' CronJob reads it: lists,
// ranges, steps, month and weekday names, 7 as Sunday, '?' as '*', and the @yearly/@monthly/@weekly/@daily/@hourly
// macros. Day of month and day of week both restricted means either may match (as in Vixie cron). Parsing says
// exactly which field is wrong; the next run is computed in an IANA time zone (./zone.ts).
import { instantOf, wallClock } from './zone.ts';

export interface CronSchedule {
  /** the text it was parsed from */
  text: string;
  minutes: readonly number[];
  hours: readonly number[];
  days: ReadonlySet<number>;
  months: ReadonlySet<number>;
  weekdays: ReadonlySet<number>;
  /** the field was '*' or '?': it does not restrict (matters for the either-or rule of days) */
  anyDay: boolean;
  anyWeekday: boolean;
}

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const fieldSpecs: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  {
    name: 'month',
    min: 1,
    max: 12,
    names: ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'],
  },
  { name: 'day of week', min: 0, max: 7, names: ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] },
];

const macros: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

export class CronError extends Error {}

function value(text: string, spec: FieldSpec): number {
  const named = spec.names?.indexOf(text.toUpperCase()) ?? -1;
  if (named >= 0) return spec.min === 0 ? named : named + 1;
  if (!/^\d+$/.test(text)) {
    const names = spec.names ? ` or a name (${spec.names.join(', ')})` : '';
    throw new CronError(`"${text}" in the ${spec.name} field is not a number${names}`);
  }
  const n = Number(text);
  if (n < spec.min || n > spec.max)
    throw new CronError(`${n} in the ${spec.name} field is out of range ${spec.min}-${spec.max}`);
  return n;
}

function item(text: string, spec: FieldSpec, into: Set<number>): void {
  const [range, stepText, extra] = text.split('/');
  if (extra !== undefined || range === '')
    throw new CronError(`"${text}" in the ${spec.name} field is not a value, range or step`);
  let step = 1;
  if (stepText !== undefined) {
    if (!/^\d+$/.test(stepText) || Number(stepText) === 0)
      throw new CronError(`the step "/${stepText}" in the ${spec.name} field must be a whole number above 0`);
    step = Number(stepText);
  }
  let from: number;
  let to: number;
  if (range === '*' || range === '?') {
    [from, to] = [spec.min, spec.max];
  } else {
    const [a, b, more] = range.split('-');
    if (more !== undefined || a === '' || b === '')
      throw new CronError(`"${range}" in the ${spec.name} field is not a value or a range a-b`);
    from = value(a, spec);
    // "5/15" means from 5 to the end in steps of 15
    to = b !== undefined ? value(b, spec) : stepText !== undefined ? spec.max : from;
    if (from > to) throw new CronError(`the range ${range} in the ${spec.name} field runs backwards`);
  }
  for (let n = from; n <= to; n += step) into.add(n);
}

function field(text: string, spec: FieldSpec): Set<number> {
  const values = new Set<number>();
  for (const part of text.split(',')) item(part, spec, values);
  return values;
}

/** The schedule, or a CronError saying which field is wrong and why. */
export function parseCron(text: string): CronSchedule {
  const trimmed = text.trim();
  if (/^(CRON_)?TZ=/.test(trimmed))
    throw new CronError('a time zone inside the schedule is not supported; set spec.timeZone instead');
  if (trimmed.startsWith('@every'))
    throw new CronError('@every is not supported; use a cron expression such as "*/15 * * * *"');
  const expanded = trimmed.startsWith('@') ? macros[trimmed.toLowerCase()] : trimmed;
  if (expanded === undefined)
    throw new CronError(`"${trimmed}" is not a known macro (@yearly, @monthly, @weekly, @daily, @hourly)`);
  const fields = expanded.split(/\s+/);
  if (fields.length !== 5)
    throw new CronError(
      `"${trimmed}" has ${fields.length} fields; a cron schedule has 5: minute hour day-of-month month day-of-week`,
    );
  const [minutes, hours, days, months, weekdays] = fields.map((f, i) => field(f, fieldSpecs[i]));
  if (weekdays.delete(7)) weekdays.add(0);
  const isAny = (f: string): boolean => f === '*' || f === '?';
  return {
    text: trimmed,
    minutes: [...minutes].sort((a, b) => a - b),
    hours: [...hours].sort((a, b) => a - b),
    days,
    months,
    weekdays,
    anyDay: isAny(fields[2]),
    anyWeekday: isAny(fields[4]),
  };
}

/** Why `text` is not a cron schedule, or undefined when it is one. */
export function cronProblem(text: string): string | undefined {
  try {
    parseCron(text);
    return undefined;
  } catch (err) {
    if (err instanceof CronError) return err.message;
    throw err;
  }
}

function dayMatches(s: CronSchedule, day: number, weekday: number): boolean {
  const byDay = s.days.has(day);
  const byWeekday = s.weekdays.has(weekday);
  return s.anyDay || s.anyWeekday ? byDay && byWeekday : byDay || byWeekday;
}

/** Calendar days searched before concluding a schedule never fires (e.g. "0 0 30 2 *"); covers leap years. */
const searchDays = 5 * 366;

/**
 * The first time after `afterMs` the schedule fires in `zone`, or undefined when it never does. A minute that
 * clocks skip (spring forward) does not fire; a minute clocks show twice (fall back) fires once, the first time.
 */
export function nextRun(s: CronSchedule, afterMs: number, zone: string): number | undefined {
  const start = wallClock(afterMs, zone);
  for (let d = 0; d < searchDays; d++) {
    const date = new Date(Date.UTC(start.year, start.month - 1, start.day + d));
    const [year, month, day] = [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate()];
    if (!s.months.has(month) || !dayMatches(s, day, date.getUTCDay())) continue;
    for (const hour of s.hours) {
      if (d === 0 && hour < start.hour) continue;
      for (const minute of s.minutes) {
        if (d === 0 && hour === start.hour && minute < start.minute) continue;
        const at = instantOf({ year, month, day, hour, minute }, zone);
        if (at !== undefined && at > afterMs) return at;
      }
    }
  }
  return undefined;
}
