import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { clampGoTimeYear, formatGoTime, goZeroTime, localTime, parseGoTime } from '../../../src/engine/tree/gotime.ts';

interface TimeVector {
  sec: number;
  nsec: number;
  offset: number;
  json: string;
}
const vectors = JSON.parse(readFileSync(new URL('./fixtures/go-vectors.json', import.meta.url), 'utf8')) as {
  times: TimeVector[];
};

const ns = (sec: number, nsec = 0): bigint => BigInt(sec) * 1_000_000_000n + BigInt(nsec);

test('formats RFC 3339 with trimmed nanoseconds as Go does', () => {
  assert.equal(formatGoTime({ ns: ns(1700000000, 123456789), offset: 0 }), '2023-11-14T22:13:20.123456789Z');
  assert.equal(formatGoTime({ ns: ns(1700000000, 120000000), offset: 3600 }), '2023-11-14T23:13:20.12+01:00');
  assert.equal(formatGoTime({ ns: ns(1700000000), offset: -(5 * 3600 + 30 * 60) }), '2023-11-14T16:43:20-05:30');
  assert.equal(formatGoTime({ ns: ns(-1, 999999999), offset: 0 }), '1969-12-31T23:59:59.999999999Z');
  assert.equal(formatGoTime(goZeroTime), '0001-01-01T00:00:00Z');
});

test('matches every time Go marshalled', () => {
  assert.ok(vectors.times.length > 200);
  for (const v of vectors.times) {
    const text = JSON.parse(v.json) as string;
    assert.equal(formatGoTime({ ns: ns(v.sec, v.nsec), offset: v.offset }), text, v.json);
    const parsed = parseGoTime(text);
    // Go writes offsets in whole minutes, so a zone with leftover seconds shifts the instant it reads back.
    assert.equal(parsed.ns, ns(v.sec, v.nsec) + BigInt(v.offset % 60) * 1_000_000_000n, v.json);
    assert.equal(formatGoTime(parsed), text, v.json);
  }
});

test('parse and format are inverse for any instant and minute offset', () => {
  const min = -62167219200n * 1_000_000_000n + 86400n * 1_000_000_000n;
  const max = 253402300799n * 1_000_000_000n - 86400n * 1_000_000_000n;
  fc.assert(
    fc.property(fc.bigInt({ min, max }), fc.integer({ min: -14 * 60, max: 14 * 60 }), (t, minutes) => {
      const time = { ns: t, offset: minutes * 60 };
      assert.deepEqual(parseGoTime(formatGoTime(time)), time);
    }),
    { numRuns: 500 },
  );
});

test('rejects text Go would not accept', () => {
  for (const bad of [
    '2023-11-14 22:13:20Z',
    '2023-13-01T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2023-11-14T24:00:00Z',
    '2023-11-14T22:13:20',
    '2023-11-14T22:13:20+24:00',
  ]) {
    assert.throws(() => parseGoTime(bad), /time/, bad);
  }
  assert.equal(parseGoTime('2024-02-29T00:00:00.1234567891Z').ns % 1_000_000_000n, 123456789n);
});

test('clamps years like restic before marshalling', () => {
  const far = parseGoTime('9999-12-31T23:59:59Z').ns + ns(366 * 86400);
  assert.equal(formatGoTime(clampGoTimeYear({ ns: far, offset: 0 })), '9999-12-31T23:59:59Z');
  const leap = { ns: parseGoTime('2024-02-29T12:00:00Z').ns + ns(8000 * 365 * 86400 + 1940 * 86400), offset: 0 };
  assert.match(formatGoTime(clampGoTimeYear(leap)), /^9999-/);
  const before = { ns: parseGoTime('0000-03-01T00:00:00Z').ns - ns(400 * 86400), offset: 0 };
  assert.equal(formatGoTime(clampGoTimeYear(before)), '0000-01-26T00:00:00Z');
  assert.throws(() => formatGoTime({ ns: far, offset: 0 }), /years 0-9999/);
});

test('local time takes the offset of the process time zone', () => {
  const t = localTime(ns(1700000000));
  assert.equal(t.offset, -new Date(1700000000 * 1000).getTimezoneOffset() * 60);
});
