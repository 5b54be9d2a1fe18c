// Runs a command on a pseudo-terminal inside a private tmux server and records what its screen showed while it
// ran, so tests can check output meant for people at a terminal (progress bars redrawn in place).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface TerminalRun {
  /** exit code of the command */
  code: number;
  /** every distinct visible screen seen while it ran, in order */
  screens: string[];
  /** the whole scrollback at the end */
  final: string;
}

function quote(arg: string): string {
  return `'${arg.replaceAll("'", `'\\''`)}'`;
}

export async function runInTerminal(
  argv: string[],
  opts: { env?: Record<string, string>; timeoutMs: number; width?: number; pollMs?: number },
): Promise<TerminalRun> {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-tty-'));
  const socket = `ferry-test-${randomBytes(4).toString('hex')}`;
  const exitFile = join(dir, 'exit');
  const env = Object.entries(opts.env ?? {})
    .map(([k, v]) => `${k}=${quote(v)}`)
    .join(' ');
  // the shell stays after the command so the last screen can still be read
  const script = `env ${env} ${argv.map(quote).join(' ')}; echo $? > ${quote(exitFile)}; sleep 3600`;
  const tmux = (...args: string[]) =>
    run('tmux', ['-L', socket, '-f', '/dev/null', ...args], { maxBuffer: 16 * 1024 * 1024 });
  const screens: string[] = [];
  try {
    await tmux('new-session', '-d', '-s', 't', '-x', String(opts.width ?? 200), '-y', '50', script);
    const deadline = Date.now() + opts.timeoutMs;
    for (;;) {
      const { stdout } = await tmux('capture-pane', '-p', '-t', 't');
      if (screens[screens.length - 1] !== stdout) screens.push(stdout);
      const code = await readFile(exitFile, 'utf8').catch(() => undefined);
      if (code !== undefined && code.trim() !== '') {
        const { stdout: final } = await tmux('capture-pane', '-p', '-t', 't', '-S', '-', '-J');
        return { code: Number(code.trim()), screens, final };
      }
      if (Date.now() > deadline)
        throw new Error(
          `${argv.join(' ')} did not end within ${opts.timeoutMs / 1000} s on the terminal; last screen:\n${stdout}`,
        );
      await new Promise((r) => setTimeout(r, opts.pollMs ?? 200));
    }
  } finally {
    await tmux('kill-server').catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}
