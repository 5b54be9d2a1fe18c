// Go's time.Time as restic writes it in JSON: RFC 3339 with up to nine fraction digits (trailing zeros
// trimmed) and the offset of the zone the time was taken in ("Z" for UTC). A JS Date keeps neither the
// nanoseconds nor the offset, so a time is an exact instant plus the offset needed to re-encode it.

/** A value: never modified, so nodes may share one (restic often writes the same mtime, atime and ctime). */
export interface GoTime {
  /** nanoseconds since 1970-01-01T00:00:00Z */
  readonly ns: bigint;
  /** seconds east of UTC of the zone the time is shown in */
  readonly offset: number;
}

const NS_PER_SEC = 1_000_000_000n;

/** Go's zero time.Time (0001-01-01T00:00:00Z), what restic writes for a time it never set. */
export const goZeroTime: GoTime = { ns: -62135596800n * NS_PER_SEC, offset: 0 };

export function utcTime(ns: bigint): GoTime {
  return { ns, offset: 0 };
}

/** The instant in this process's time zone (TZ), as Go's time.Unix gives it to restic. */
export function localTime(ns: bigint): GoTime {
  const ms = Number(ns / 1_000_000n);
  const minutesWest = new Date(ms).getTimezoneOffset();
  return { ns, offset: Number.isNaN(minutesWest) ? 0 : Math.round(-minutesWest * 60) };
}

export function sameInstant(a: GoTime, b: GoTime): boolean {
  return a.ns === b.ns;
}

// Proleptic Gregorian calendar conversions on day numbers (days since 1970-01-01), after H. Hinnant.
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function civilFromDays(days: number): [number, number, number] {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (month <= 2 ? 1 : 0), month, day];
}

interface Civil {
  year: number;
  month: number;
  day: number;
  secondOfDay: number;
  nanos: number;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

function toCivil(t: GoTime): Civil {
  const sec = floorDiv(t.ns, NS_PER_SEC);
  const nanos = Number(t.ns - sec * NS_PER_SEC);
  const local = Number(sec) + t.offset;
  const days = Math.floor(local / 86400);
  const [year, month, day] = civilFromDays(days);
  return { year, month, day, secondOfDay: local - days * 86400, nanos };
}

function fromCivil(c: Civil, offset: number): GoTime {
  const local = daysFromCivil(c.year, c.month, c.day) * 86400 + c.secondOfDay;
  return { ns: BigInt(local - offset) * NS_PER_SEC + BigInt(c.nanos), offset };
}

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** Instants in years 1 to 9998 in every zone (offsets stay within a day), which need no conversion to check. */
const surelyInRange = { min: -62135596800n * NS_PER_SEC + 86400n * NS_PER_SEC, max: 253370764800n * NS_PER_SEC };

/**
 * restic's fixTime: a year before 0 or after 9999 cannot be written as RFC 3339, so only the year is
 * moved into range (Feb 29 of a leap year becomes Mar 1 like Go's AddDate).
 */
export function clampGoTimeYear(t: GoTime): GoTime {
  if (t.ns > surelyInRange.min && t.ns < surelyInRange.max) return t;
  const c = toCivil(t);
  if (c.year >= 0 && c.year <= 9999) return t;
  return fromCivil({ ...c, year: c.year < 0 ? 0 : 9999 }, t.offset);
}

// The three times of a node are often equal, so the last conversion each way is remembered.
let lastFormatted: { t: GoTime; text: string } = { t: goZeroTime, text: '0001-01-01T00:00:00Z' };
let lastParsed: { text: string; t: GoTime } = lastFormatted;

/** Go's Time.MarshalJSON text without the quotes, e.g. 2024-05-01T10:00:00.5+02:00. */
export function formatGoTime(t: GoTime): string {
  if (t.ns === lastFormatted.t.ns && t.offset === lastFormatted.t.offset) return lastFormatted.text;
  const text = formatUncached(t);
  lastFormatted = { t, text };
  return text;
}

function formatUncached(t: GoTime): string {
  const c = toCivil(t);
  if (c.year < 0 || c.year > 9999) throw new Error(`time ${t.ns}ns is outside the years 0-9999 that RFC 3339 can hold`);
  const h = Math.floor(c.secondOfDay / 3600);
  const m = Math.floor((c.secondOfDay % 3600) / 60);
  const s = c.secondOfDay % 60;
  let text = `${pad(c.year, 4)}-${pad(c.month, 2)}-${pad(c.day, 2)}T${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}`;
  if (c.nanos !== 0) text += '.' + pad(c.nanos, 9).replace(/0+$/, '');
  return text + formatOffset(t.offset);
}

function formatOffset(offset: number): string {
  if (offset === 0) return 'Z';
  // Go truncates the offset to whole minutes toward zero, so -30s shows as +00:00.
  let minutes = Math.trunc(offset / 60);
  const sign = minutes < 0 ? '-' : '+';
  minutes = Math.abs(minutes);
  if (minutes >= 24 * 60) throw new Error(`time zone offset ${offset}s is outside the ±24h that RFC 3339 can hold`);
  return `${sign}${pad(Math.floor(minutes / 60), 2)}:${pad(minutes % 60, 2)}`;
}

function daysInMonth(year: number, month: number): number {
  return daysFromCivil(month === 12 ? year + 1 : year, month === 12 ? 1 : month + 1, 1) - daysFromCivil(year, month, 1);
}

/** Parses what Go's Time.UnmarshalJSON accepts: RFC 3339, any number of fraction digits (beyond nine ignored). */
export function parseGoTime(text: string): GoTime {
  if (text === lastParsed.text) return lastParsed.t;
  const t = parseUncached(text);
  lastParsed = { text, t };
  return t;
}

/** The decimal number in text[from, from + count), or -1 if those are not all digits. */
function digits(text: string, from: number, count: number): number {
  let n = 0;
  for (let i = from; i < from + count; i++) {
    const d = text.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** Fixed positions of RFC 3339 (YYYY-MM-DDTHH:MM:SS), read by hand: trees hold three times per node. */
function parseUncached(text: string): GoTime {
  const syntax = (): Error => new Error(`time ${JSON.stringify(text)} is not in RFC 3339 format`);
  const separators = text[4] === '-' && text[7] === '-' && text[10] === 'T' && text[13] === ':' && text[16] === ':';
  const [year, month, day, hour, minute, second] = [
    [0, 4],
    [5, 2],
    [8, 2],
    [11, 2],
    [14, 2],
    [17, 2],
  ].map(([from, n]) => digits(text, from, n));
  if (!separators || Math.min(year, month, day, hour, minute, second) < 0) throw syntax();
  let p = 19;
  let nanos = 0;
  if (text[p] === '.') {
    let end = p + 1;
    while (digits(text, end, 1) >= 0) end++;
    if (end === p + 1) throw syntax();
    nanos = Number(text.slice(p + 1, Math.min(end, p + 10)).padEnd(9, '0'));
    p = end;
  }
  let offset = 0;
  if (text[p] !== 'Z' || p + 1 !== text.length) {
    const [oh, om] = [digits(text, p + 1, 2), digits(text, p + 4, 2)];
    if ((text[p] !== '+' && text[p] !== '-') || text[p + 3] !== ':' || p + 6 !== text.length || Math.min(oh, om) < 0)
      throw syntax();
    if (oh >= 24 || om >= 60) throw new Error(`time ${JSON.stringify(text)} has a time zone offset out of range`);
    offset = (oh * 3600 + om * 60) * (text[p] === '-' ? -1 : 1);
  }
  const valid =
    month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month) && hour < 24 && minute < 60 && second < 60;
  if (!valid) throw new Error(`time ${JSON.stringify(text)} has a field out of range`);
  return fromCivil({ year, month, day, secondOfDay: hour * 3600 + minute * 60 + second, nanos }, offset);
}
