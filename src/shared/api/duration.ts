// Go's duration strings ("10m", "1h30m", "90s", "1.5h"), as Velero's operationTimeout uses them.

const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Milliseconds, or undefined for an empty value; throws on anything that is not a Go duration. */
export function parseDuration(text: string | undefined): number | undefined {
  if (text === undefined || text === '') return undefined;
  if (text === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/y;
  let total = 0;
  let pos = 0;
  while (pos < text.length) {
    re.lastIndex = pos;
    const m = re.exec(text);
    if (!m) throw new Error(`"${text}" is not a duration (examples: 90s, 10m, 1h30m)`);
    total += Number(m[1]) * units[m[2]];
    pos = re.lastIndex;
  }
  return Math.round(total);
}
