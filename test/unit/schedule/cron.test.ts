import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { cronProblem, nextRun, parseCron } from '../../../src/shared/schedule/cron.ts';
import type { CronSchedule } from '../../../src/shared/schedule/cron.ts';
import { wallClock } from '../../../src/shared/schedule/zone.ts';
import { testSeed } from '../../support/seeded.ts';

test('a wrong schedule is refused with the field and the reason', () => {
  const cases: [string, RegExp][] = [
    ['* * * *', /has 4 fields; a cron schedule has 5/],
    ['60 * * * *', /60 in the minute field is out of range 0-59/],
    ['* 24 * * *', /24 in the hour field is out of range 0-23/],
    ['* * 0 * *', /0 in the day of month field is out of range 1-31/],
    ['* * * 13 *', /13 in the month field/],
    ['* * * * 8', /8 in the day of week field is out of range 0-7/],
    ['*/0 * * * *', /step "\/0" in the minute field must be a whole number above 0/],
    ['5-1 * * * *', /range 5-1 in the minute field runs backwards/],
    ['* * * FOO *', /"FOO" in the month field is not a number or a name/],
    ['@every 5m', /@every is not supported/],
    ['@often', /not a known macro/],
    ['TZ=UTC * * * * *', /set spec.timeZone/],
    ['1,,2 * * * *', /in the minute field is not a value, range or step/],
  ];
  for (const [text, message] of cases) assert.match(cronProblem(text) ?? 'accepted', message, text);
});

test('lists, ranges, steps, names, 7 as Sunday and macros parse to the minutes and days they name', () => {
  const s = parseCron('0,30 9-17/4 * JAN-mar mon-fri');
  assert.deepEqual(s.minutes, [0, 30]);
  assert.deepEqual(s.hours, [9, 13, 17]);
  assert.deepEqual([...s.months].sort(), [1, 2, 3]);
  assert.deepEqual([...s.weekdays].sort(), [1, 2, 3, 4, 5]);
  assert.deepEqual([...parseCron('0 0 * * 7').weekdays], [0]);
  assert.deepEqual(parseCron('5/20 * * * *').minutes, [5, 25, 45]);
  assert.deepEqual(parseCron('@hourly').minutes, [0]);
  assert.equal(cronProblem('@weekly'), undefined);
});

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

test('next runs in a time zone: every minute, a daily time, DST gaps skipped, a repeated hour fired once', () => {
  const at = Date.parse('2024-05-01T10:00:30Z');
  assert.equal(iso(nextRun(parseCron('* * * * *'), at, 'UTC')), '2024-05-01T10:01:00.000Z');
  assert.equal(iso(nextRun(parseCron('0 3 * * *'), at, 'Asia/Kolkata')), '2024-05-01T21:30:00.000Z'); // 03:00 +05:30
  // 02:30 does not exist in Berlin on 2024-03-31: the next 02:30 is on April 1st (CEST, +02:00)
  assert.equal(
    iso(nextRun(parseCron('30 2 * * *'), Date.parse('2024-03-30T12:00:00Z'), 'Europe/Berlin')),
    '2024-04-01T00:30:00.000Z',
  );
  // 02:30 happens twice in Berlin on 2024-10-27 (00:30Z in CEST, 01:30Z in CET): fired at the first only
  const first = nextRun(parseCron('30 2 * * *'), Date.parse('2024-10-26T12:00:00Z'), 'Europe/Berlin');
  assert.equal(iso(first), '2024-10-27T00:30:00.000Z');
  assert.equal(iso(nextRun(parseCron('30 2 * * *'), first as number, 'Europe/Berlin')), '2024-10-28T01:30:00.000Z');
  assert.equal(nextRun(parseCron('0 0 30 2 *'), at, 'UTC'), undefined);
  // both day fields restricted: either matches (the 13th, or any Friday)
  assert.equal(
    iso(nextRun(parseCron('0 0 13 * 5'), Date.parse('2024-09-01T00:00:00Z'), 'UTC')),
    '2024-09-06T00:00:00.000Z',
  );
});

function fires(s: CronSchedule, ms: number, zone: string): boolean {
  const w = wallClock(ms, zone);
  const byDay = s.days.has(w.day);
  const byWeekday = s.weekdays.has(w.weekday);
  const day = s.anyDay || s.anyWeekday ? byDay && byWeekday : byDay || byWeekday;
  return w.second === 0 && s.minutes.includes(w.minute) && s.hours.includes(w.hour) && s.months.has(w.month) && day;
}

test('nextRun is the first minute that matches, by brute force over the minutes in between (random schedules)', () => {
  const list = (min: number, max: number): fc.Arbitrary<string> =>
    fc.uniqueArray(fc.integer({ min, max }), { minLength: 1, maxLength: 4 }).map((a) => a.join(','));
  const schedule = fc
    .tuple(
      fc.oneof(
        fc.constant('*'),
        list(0, 59),
        fc.integer({ min: 1, max: 30 }).map((n) => `*/${n}`),
      ),
      fc.oneof(fc.constant('*'), list(0, 23)),
      fc.oneof(fc.constant('*'), list(1, 31)),
      fc.constant('*'),
      fc.oneof(fc.constant('*'), list(0, 6)),
    )
    .map((f) => f.join(' '));
  const zone = fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe');
  // around the 2024 DST changes of those zones, and plain days
  const start = fc
    .constantFrom(
      Date.parse('2024-03-09T00:00:00Z'),
      Date.parse('2024-03-30T12:00:00Z'),
      Date.parse('2024-10-26T12:00:00Z'),
      Date.parse('2024-04-06T12:00:00Z'),
      Date.parse('2024-06-01T00:00:00Z'),
    )
    .chain((t) => fc.integer({ min: 0, max: 2 * 86_400 }).map((s) => t + s * 1000));
  fc.assert(
    fc.property(schedule, zone, start, (text, z, after) => {
      const s = parseCron(text);
      const next = nextRun(s, after, z);
      const windowEnd = after + 3 * 86_400_000;
      let expected: number | undefined;
      for (
        let t = Math.floor(after / 60_000) * 60_000 + 60_000;
        t <= windowEnd && expected === undefined;
        t += 60_000
      ) {
        // a minute shown twice (fall back) fires the first time only: not when the same wall-clock hour came an hour ago
        const repeat = wallClock(t - 3_600_000, z).hour === wallClock(t, z).hour && fires(s, t - 3_600_000, z);
        if (fires(s, t, z) && !repeat) expected = t;
      }
      if (expected === undefined)
        assert.ok(
          next === undefined || next > windowEnd,
          `${text} in ${z}: nextRun found ${iso(next)} where no minute matches`,
        );
      else assert.equal(iso(next), iso(expected), `${text} in ${z} after ${iso(after)}`);
    }),
    { seed: testSeed(5), numRuns: 60 },
  );
});
