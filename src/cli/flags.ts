// citty accepts any flag and hands unknown ones to the command unread, so a typo such as `--read-data-subest 10%`
// would silently change what a command does. This finds the first flag the command does not declare.
import type { ArgsDef } from 'citty';

/** The flags `args` declares (names, aliases, `--no-` for booleans), without dashes, with their types. */
export function knownFlags(args: ArgsDef): Map<string, string> {
  const known = new Map<string, string>();
  for (const [name, def] of Object.entries(args)) {
    if (def.type === 'positional') continue;
    known.set(name, def.type ?? 'string');
    if (def.type === 'boolean') known.set(`no-${name}`, 'boolean');
    const aliases = 'alias' in def && def.alias !== undefined ? [def.alias].flat() : [];
    for (const a of aliases) known.set(a, def.type ?? 'string');
  }
  return known;
}

/** The first flag in `rawArgs` that `args` does not declare, if any. */
export function unknownFlag(args: ArgsDef, rawArgs: string[]): string | undefined {
  const known = knownFlags(args);
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i];
    if (arg === '--') return undefined;
    if (!arg.startsWith('-') || arg === '-') continue;
    const name = arg.replace(/^--?/, '').split('=')[0];
    const type = known.get(name);
    if (type === undefined) return arg.split('=')[0];
    // the next word is this flag's value even if it starts with a dash
    if (type !== 'boolean' && !arg.includes('=')) i++;
  }
  return undefined;
}
