// Runs a citty command tree with exit codes scripts can rely on: 0 done, 1 failed, 2 bad usage, 3 canceled.
// Errors are printed as one sentence; a stack trace only with FERRY_DEBUG=1.
import { renderUsage, runCommand, type CommandDef } from 'citty';
import { consola, forStream } from './console.ts';
import { knownFlags, unknownFlag } from './flags.ts';
import { forUsage } from './lazy.ts';
import { didYouMean } from './suggest.ts';

export const exitCodes = { ok: 0, failed: 1, usage: 2, canceled: 3 } as const;

/** Bad input from the user: wrong flags, missing arguments, malformed values. */
export class UsageError extends Error {}

/** The operation stopped because the user (or a controller) asked it to. */
export class CanceledError extends Error {}

function isCittyUsageError(err: unknown): boolean {
  return err instanceof Error && err.name === 'CLIError';
}

export async function runCli(main: CommandDef, rawArgs = process.argv.slice(2)): Promise<number> {
  if (rawArgs.length === 1 && rawArgs[0] === '--version') {
    const meta = typeof main.meta === 'function' ? await main.meta() : await main.meta;
    console.log(meta?.version ?? 'unknown');
    return exitCodes.ok;
  }
  if (rawArgs.includes('--help') || rawArgs.includes('-h') || rawArgs.length === 0) {
    const [cmd, parent] = await subCommandFor(main, rawArgs);
    process.stdout.write(forStream(`${await renderUsage(await forUsage(cmd), parent)}\n\n`, process.stdout));
    return rawArgs.length === 0 ? exitCodes.usage : exitCodes.ok;
  }
  try {
    await rejectUnknownWords(main, rawArgs);
    await runCommand(main, { rawArgs });
    return exitCodes.ok;
  } catch (err) {
    if (process.env.FERRY_DEBUG === '1') consola.error(err);
    const message = err instanceof Error ? await inOurWords(err, main, rawArgs) : String(err);
    if (err instanceof UsageError || isCittyUsageError(err)) {
      consola.error(`${message} (see --help)`);
      return exitCodes.usage;
    }
    if (err instanceof CanceledError || (err instanceof Error && err.name === 'AbortError')) {
      consola.warn(message);
      return exitCodes.canceled;
    }
    consola.error(message);
    return exitCodes.failed;
  }
}

const argsOf = async (cmd: CommandDef) => (typeof cmd.args === 'function' ? await cmd.args() : await cmd.args) ?? {};

/** A mistyped command or flag, refused with the nearest one the user may have meant. */
async function rejectUnknownWords(main: CommandDef, rawArgs: string[]): Promise<void> {
  const [cmd, , unmatched] = await subCommandFor(main, rawArgs);
  if (cmd.subCommands !== undefined) {
    if (unmatched === undefined) return; // citty says a command is missing
    const [word, names] = unmatched;
    throw new UsageError(
      `unknown command "${word}"${didYouMean(word, names)}; the commands here are: ${names.join(', ')}`,
    );
  }
  const args = await argsOf(cmd);
  const flag = unknownFlag(args, rawArgs);
  if (flag === undefined) return;
  const long = [...knownFlags(args).keys()].filter((name) => name.length > 1);
  throw new UsageError(`unknown flag ${flag}${didYouMean(flag.replace(/^--?/, ''), long, '--')}`);
}

const missingPositional = /^Missing required positional argument: (\S+)$/;

/** citty's own messages in ferry's words: a missing NAME is said as the help names it. */
async function inOurWords(err: Error, main: CommandDef, rawArgs: string[]): Promise<string> {
  const missing = isCittyUsageError(err) ? missingPositional.exec(err.message)?.[1] : undefined;
  if (missing === undefined) return err.message;
  const [cmd] = await subCommandFor(main, rawArgs);
  const def = Object.entries(await argsOf(cmd)).find(([name]) => name.toUpperCase() === missing)?.[1];
  return `${(def && 'valueHint' in def && def.valueHint) || missing} is required`;
}

/**
 * The innermost sub-command named in the arguments (for help output), its parent, and the first word that names
 * none of the sub-commands where one was expected, with their names.
 */
async function subCommandFor(
  cmd: CommandDef,
  rawArgs: string[],
): Promise<[CommandDef, CommandDef?, [string, string[]]?]> {
  let parent: CommandDef | undefined;
  let current = cmd;
  for (const arg of rawArgs) {
    if (arg.startsWith('-')) continue;
    const subs = typeof current.subCommands === 'function' ? await current.subCommands() : await current.subCommands;
    if (subs === undefined) break;
    const next = subs[arg];
    if (!next) return [current, parent, [arg, Object.keys(subs)]];
    parent = current;
    current = (typeof next === 'function' ? await next() : await next) as CommandDef;
  }
  return [current, parent];
}
