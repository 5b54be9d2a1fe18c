// A sub-command that loads its module only when it is named, so a command does not pay at start-up for the
// modules of all the others.
import type { CommandDef } from 'citty';

// each command's own argument types are narrower than CommandDef's default; citty checks the arguments at run time
export const lazy = (load: () => Promise<{ default: CommandDef<any> }>) => () =>
  load().then((m) => m.default as CommandDef);
