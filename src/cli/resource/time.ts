// Times as people read them in a terminal: ages like kubectl's (45s, 12m, 3h, 5d) and spans between timestamps.

/** How long ago `timestamp` was, kubectl style; "<unknown>" when there is none. */
export function age(timestamp: string | undefined, now = Date.now()): string {
  const t = timestamp ? Date.parse(timestamp) : NaN;
  if (Number.isNaN(t)) return '<unknown>';
  return span(Math.max(0, now - t));
}

/** A duration in the largest unit or two that matter: 45s, 2m30s, 3h12m, 5d4h. */
export function span(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
}

/** The time from `from` to `to` (or now), or "" when `from` is unknown. */
export function between(from: string | undefined, to?: string, now = Date.now()): string {
  const a = from ? Date.parse(from) : NaN;
  const b = to ? Date.parse(to) : now;
  return Number.isNaN(a) || Number.isNaN(b) ? '' : span(Math.max(0, b - a));
}

/**
 * A point in time as every command prints it: RFC 3339 in UTC to the second. The apiserver writes microseconds
 * (.076000Z) in Events and the steps milliseconds (.001Z); shown raw they read as two formats.
 */
export function timestamp(value: string | undefined): string | undefined {
  const t = value ? Date.parse(value) : NaN;
  return Number.isNaN(t) ? value : new Date(t).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** A point in time and how long ago it was: "2026-01-01T00:00:00Z (5m ago)". */
export function timeAndAge(value: string | undefined): string | undefined {
  return value ? `${timestamp(value)} (${age(value)} ago)` : undefined;
}
