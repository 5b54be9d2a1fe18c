// Small helpers shared by the repo commands.
import type { ID } from '../../engine/operations/snapshots.ts';

/** A flag given several times or comma-separated, as one list. */
export function list(v: unknown): string[] {
  const values = Array.isArray(v) ? v : v === undefined || v === '' ? [] : [v];
  return values
    .flatMap((x) => String(x).split(','))
    .map((x) => x.trim())
    .filter((x) => x.length > 0);
}

/** Aborts on the first SIGINT or SIGTERM, so a long operation stops cleanly and releases its lock. */
export function signalFromProcess(): AbortSignal {
  const ac = new AbortController();
  const stop = (sig: string) => ac.abort(Object.assign(new Error(`canceled by ${sig}`), { name: 'AbortError' }));
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  return ac.signal;
}

/** restic's `ID[:subpath]` / `latest[:subpath]` snapshot argument: the snapshot is found once the lock is held. */
export function snapshotArg(arg: string): { spec: string; subpath: string } {
  const colon = arg.indexOf(':');
  const spec = colon < 0 ? arg : arg.slice(0, colon);
  const subpath = colon < 0 ? '/' : arg.slice(colon + 1) || '/';
  return { spec, subpath };
}

export function short(id: ID): string {
  return id.slice(0, 8);
}

/** Every value of a flag given several times (`--tag a --tag b,c`): citty keeps only the last. */
export function repeated(rawArgs: readonly string[], flag: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i];
    if (arg === '--') break;
    if (arg === `--${flag}` && i + 1 < rawArgs.length) values.push(rawArgs[++i]);
    else if (arg.startsWith(`--${flag}=`)) values.push(arg.slice(flag.length + 3));
  }
  return values;
}
