// A sub-command that loads its module only when it is run or its own help is asked for, so a command does not pay at
// start-up for the modules of all the others. Its meta (the module's own, name and description) is given here as
// well: a parent's help lists its sub-commands by meta alone, and loading them all for that cost `ferry --help`
// the Kubernetes client's modules (0.6 s of CPU). test/cli/help-loads-nothing.test.ts checks both metas agree.
import type { CommandDef, CommandMeta, SubCommandsDef } from 'citty';

export interface LazyCommand {
  (): Promise<CommandDef>;
  meta: CommandMeta;
}

// each command's own argument types are narrower than CommandDef's default; citty checks the arguments at run time
type Load = () => Promise<{ default: CommandDef<any> }>;

/** Sub-commands by name, each given by its description and how to load it. */
export function lazyCommands(table: Record<string, [description: string, load: Load]>): Record<string, LazyCommand> {
  const commands: Record<string, LazyCommand> = {};
  for (const [name, [description, load]] of Object.entries(table))
    commands[name] = Object.assign(() => load().then((m) => m.default as CommandDef), { meta: { name, description } });
  return commands;
}

const isLazy = (sub: unknown): sub is LazyCommand => typeof sub === 'function' && 'meta' in sub;

/** `cmd` as its help shows it: its lazy sub-commands stand in by their meta, none loaded. */
export async function forUsage(cmd: CommandDef): Promise<CommandDef> {
  const subs = typeof cmd.subCommands === 'function' ? await cmd.subCommands() : await cmd.subCommands;
  if (subs === undefined) return cmd;
  const shown: SubCommandsDef = {};
  for (const [name, sub] of Object.entries(subs)) shown[name] = isLazy(sub) ? { meta: sub.meta } : sub;
  return { ...cmd, subCommands: shown };
}
