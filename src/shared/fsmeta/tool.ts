// Runs one of the small system tools ferry relies on where Node has no API (getfattr, setfattr, mkfifo,
// mknod), collecting its output. The environment is fixed to the C locale so messages and escaping do
// not depend on the pod's settings.
import { spawn } from 'node:child_process';

export interface ToolResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Rejects only when the tool cannot be started (e.g. not installed); a non-zero exit is in `code`. */
export function runTool(command: string, args: readonly string[], stdin?: Uint8Array): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, LC_ALL: 'C' }, stdio: [stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (b: Buffer) => out.push(b));
    child.stderr!.on('data', (b: Buffer) => err.push(b));
    child.on('error', (e: NodeJS.ErrnoException) => {
      reject(e.code === 'ENOENT' ? new Error(`${command} is not installed (needed for ${purpose(command)})`) : e);
    });
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }));
    if (stdin) {
      child.stdin!.on('error', () => undefined); // an early exit surfaces through the exit code and stderr
      child.stdin!.end(stdin);
    }
  });
}

function purpose(command: string): string {
  if (command === 'getfattr' || command === 'setfattr') return 'extended attributes; Debian package "attr"';
  return 'special files; Debian package "coreutils"';
}
