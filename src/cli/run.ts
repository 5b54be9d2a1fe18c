// Runs a citty command tree with exit codes scripts can rely on: 0 done, 1 failed, 2 bad usage, 3 canceled.
// Errors are printed as one sentence; a stack trace only with FERRY_DEBUG=1.
import { renderUsage, runCommand, type CommandDef } from 'citty';
import { consola, forStream } from './console.ts';
import { unknownFlag } from './flags.ts';

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
    process.stdout.write(
      forStream(`${await renderUsage(...(await subCommandFor(main, rawArgs)))}\n\n`, process.stdout),
    );
    return rawArgs.length === 0 ? exitCodes.usage : exitCodes.ok;
  }
  try {
    await rejectUnknownFlags(main, rawArgs);
    await runCommand(main, { rawArgs });
    return exitCodes.ok;
  } catch (err) {
    if (process.env.FERRY_DEBUG === '1') consola.error(err);
    const message = err instanceof Error ? err.message : String(err);
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

async function rejectUnknownFlags(main: CommandDef, rawArgs: string[]): Promise<void> {
  const [cmd] = await subCommandFor(main, rawArgs);
  // only a command that runs has its flags settled; elsewhere citty reports the unknown command itself
  if (cmd.subCommands !== undefined) return;
  const args = typeof cmd.args === 'function' ? await cmd.args() : await cmd.args;
  const flag = unknownFlag(args ?? {}, rawArgs);
  if (flag !== undefined) throw new UsageError(`unknown flag ${flag}`);
}

/** The innermost sub-command named in the arguments, for help output. */
async function subCommandFor(cmd: CommandDef, rawArgs: string[]): Promise<[CommandDef, CommandDef?]> {
  let parent: CommandDef | undefined;
  let current = cmd;
  for (const arg of rawArgs) {
    if (arg.startsWith('-')) continue;
    const subs = typeof current.subCommands === 'function' ? await current.subCommands() : await current.subCommands;
    const next = subs?.[arg];
    if (!next) break;
    parent = current;
    current = (typeof next === 'function' ? await next() : await next) as CommandDef;
  }
  return [current, parent];
}
