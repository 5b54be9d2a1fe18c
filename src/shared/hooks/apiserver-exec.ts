// PodExec over the apiserver's pods/exec WebSocket, as `kubectl exec` does: @kubernetes/client-node's Exec
// authenticates (client certificates, ServiceAccount tokens) and the kubelet runs the command in the container.
//
// A timeout must stop the command, and closing the stream does not: the runtime keeps an exec'd process running
// after its client is gone. So where the container has /bin/sh the command is started through a tiny wrapper that
// reports its pid on stderr (`echo "<marker> $$" >&2; exec "$@"`, the marker line is removed from the output), and
// at the timeout a second exec kills that process and what it started. A container without sh (distroless, pause)
// runs the argv directly; at its timeout the stream is closed and the result says the process may still run.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type { IncomingMessage } from 'node:http';
import { Readable, Writable } from 'node:stream';
import { Exec, type KubeConfig, type V1Status } from '@kubernetes/client-node';
import { WebSocketHandler } from '@kubernetes/client-node/dist/web-socket-handler.js';
import type { ExecRequest, ExecResult, PodExec } from './exec.ts';
import { OutputTail } from './output.ts';

/** How long the kill (itself an exec) may take before the run gives up on it. */
const killTimeoutMs = 10_000;
/** setTimeout fires at once beyond this; a hook timeout longer than ~24 days is cut to it */
const maxTimerMs = 2 ** 31 - 1;
/** how much of a refused handshake's body is read for the apiserver's message */
const maxErrorBody = 64 << 10;
const markerPrefix = 'ferry-hook-pid-';
/** a command cut off while still starting may not have reported its pid yet: how long to wait for it then */
const pidGraceMs = 5_000;

/**
 * Stops a process and every process under it. The parent is stopped first so that it cannot start new children while
 * they are killed (a shell loop would), then the tree is killed leaves first; children are read from /proc.
 */
const killTree =
  'k() { kill -STOP "$1" 2>/dev/null; for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do k "$c"; done; ' +
  'kill -KILL "$1" 2>/dev/null; }; k "$1"';

export function apiserverExec(kc: KubeConfig): PodExec {
  return { exec: (req) => execCommand(kc, req) };
}

async function execCommand(kc: KubeConfig, req: ExecRequest): Promise<ExecResult> {
  if (req.command.length === 0) return { timedOut: false, output: '', error: 'no command to run' };
  if (req.signal?.aborted) return { timedOut: false, output: '', error: 'canceled before the command started' };
  const deadline = Date.now() + Math.min(Math.max(req.timeoutMs, 0), maxTimerMs);
  const marker = `${markerPrefix}${randomBytes(8).toString('hex')}`;
  const wrapped = ['sh', '-c', `echo "${marker} $$" >&2; exec "$@"`, 'sh', ...req.command];
  const viaShell = await follow(kc, req, openSession(kc, req, wrapped, marker), deadline);
  if (!shellMissing(viaShell) || req.signal?.aborted) return viaShell.result;
  return (await follow(kc, req, openSession(kc, req, req.command), deadline)).result;
}

interface Followed {
  result: ExecResult;
  /** the wrapper reported its pid: sh exists and started */
  shellStarted: boolean;
}

/** Waits for the session's end, the deadline or the abort; stops the command in the last two cases. */
async function follow(kc: KubeConfig, req: ExecRequest, session: Session, deadline: number): Promise<Followed> {
  const ending = await raceEnd(session.ended, deadline, req.signal);
  if (ending !== 'timeout' && ending !== 'aborted') {
    session.close();
    return { result: { ...ending, timedOut: false, output: session.output() }, shellStarted: !!session.pid() };
  }
  const pid = session.pid() ?? (await session.pidReported(pidGraceMs));
  const stopped = pid
    ? await killProcess(kc, req, pid)
    : session.wrapped
      ? 'the command had not reported its pid in time: if it started, it may still run in the container'
      : 'the container has no /bin/sh to kill the command with: it may still run there';
  session.close();
  const why = ending === 'timeout' ? undefined : 'canceled';
  const error = [why, stopped].filter(Boolean).join('; ') || undefined;
  return {
    result: { timedOut: ending === 'timeout', output: session.output(), ...(error ? { error } : {}) },
    shellStarted: !!pid,
  };
}

/** The kill as a second exec; undefined when it worked, else why the process may still run. */
async function killProcess(kc: KubeConfig, req: ExecRequest, pid: string): Promise<string | undefined> {
  const session = openSession(kc, req, ['sh', '-c', killTree, 'sh', pid]);
  const ending = await raceEnd(session.ended, Date.now() + killTimeoutMs, undefined);
  session.close();
  if (ending === 'timeout')
    return `the kill of pid ${pid} did not answer in ${killTimeoutMs / 1000} s: it may still run`;
  if (ending !== 'aborted' && ending.error) return `could not kill pid ${pid}, it may still run: ${ending.error}`;
  return undefined;
}

/** The wrapper could not start because the container has no sh: the runtime refused the exec itself. */
function shellMissing(run: Followed): boolean {
  const error = run.result.error ?? '';
  return (
    !run.shellStarted &&
    !run.result.timedOut &&
    run.result.exitCode === undefined &&
    /\bsh\b/.test(error) &&
    /not found|no such file/i.test(error)
  );
}

type Ended = { exitCode?: number; error?: string };

function raceEnd(
  ended: Promise<Ended>,
  deadline: number,
  signal?: AbortSignal,
): Promise<Ended | 'timeout' | 'aborted'> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => finish('timeout'), Math.max(0, deadline - Date.now()));
    const onAbort = () => finish('aborted');
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) finish('aborted');
    void ended.then(finish);
    function finish(value: Ended | 'timeout' | 'aborted'): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(value);
    }
  });
}

interface Session {
  /** started through the pid-reporting wrapper */
  wrapped: boolean;
  /** settles when the stream ends, with the exit code or the reason there is none; never rejects */
  ended: Promise<Ended>;
  output(): string;
  /** the command's pid, once the wrapper reported it */
  pid(): string | undefined;
  /** the pid as soon as the wrapper reports it; undefined when it will not (no wrapper, stream ended) or not in time */
  pidReported(waitMs: number): Promise<string | undefined>;
  close(): void;
}

/** ws, the WebSocket client @kubernetes/client-node itself uses (its `isomorphic-ws`), resolved from there. */
interface Socket {
  on(event: 'open' | 'close', listener: () => void): void;
  on(event: 'unexpected-response', listener: (request: unknown, response: IncomingMessage) => void): void;
  terminate(): void;
}
type SocketClass = new (uri: string, protocols: string[], opts: object) => Socket;
const WebSocket = createRequire(import.meta.resolve('@kubernetes/client-node'))('isomorphic-ws') as SocketClass;

function openSession(kc: KubeConfig, req: ExecRequest, command: string[], marker?: string): Session {
  const tail = new OutputTail();
  const stderr = marker ? new PidLine(marker, tail) : undefined;
  let socket: Socket | undefined;
  let opened = false;
  let closed = false;
  let status: V1Status | undefined;
  let refusal: Promise<string> | undefined;
  const ended = new Promise<Ended>((resolve) => {
    const factory = (uri: string, protocols: string[], opts: object) => {
      const ws = new WebSocket(uri, protocols, opts);
      socket = ws;
      // closed while the credentials were being read: the connection is not wanted any more
      if (closed) ws.terminate();
      ws.on('open', () => (opened = true));
      // a refused handshake (403, 404, 400) carries the apiserver's Status; ws alone would say only the code
      ws.on('unexpected-response', (_request, response) => {
        refusal = readRefusal(response).finally(() => ws.terminate());
      });
      ws.on('close', () => {
        if (opened) resolve(status ? exitOf(status) : { error: 'the exec stream closed without an exit status' });
      });
      return ws;
    };
    const sink = (write: (chunk: Buffer) => void) =>
      new Writable({
        write(chunk: Buffer, _encoding, done) {
          write(chunk);
          done();
        },
      });
    const stdout = sink((c) => tail.push(c));
    const errors = sink((c) => (stderr ? stderr.push(c) : tail.push(c)));
    // the handler's own streams would be this process's stdio, which a close frame from the server would end
    const streams = { stdin: new Readable({ read() {} }), stdout: sink(() => {}), stderr: sink(() => {}) };
    new Exec(kc, new WebSocketHandler(kc, factory as never, streams))
      .exec(req.namespace, req.pod, req.container, command, stdout, errors, null, false, (s) => (status = s))
      .catch(async (err: unknown) => resolve({ error: (await refusal) ?? connectError(err) }));
  });
  return {
    wrapped: !!stderr,
    ended,
    output: () => {
      stderr?.flush();
      return tail.text();
    },
    pid: () => stderr?.pid,
    pidReported: async (waitMs) => {
      if (!stderr) return undefined;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)));
      try {
        return await Promise.race([stderr.reported, ended.then(() => stderr.pid), late]);
      } finally {
        clearTimeout(timer);
      }
    },
    // no close handshake: a stream given up on may have a peer that no longer answers
    close: () => {
      closed = true;
      socket?.terminate();
    },
  };
}

/** Exit code from the status channel: Success is 0, NonZeroExitCode carries the code in its ExitCode cause. */
function exitOf(status: V1Status): Ended {
  if (status.status === 'Success') return { exitCode: 0 };
  const code = status.details?.causes?.find((c) => c.reason === 'ExitCode')?.message;
  if (status.reason === 'NonZeroExitCode' && code !== undefined && /^\d+$/.test(code))
    return { exitCode: Number(code) };
  return { error: status.message || `the exec failed (${status.reason ?? 'no reason given'})` };
}

async function readRefusal(response: IncomingMessage): Promise<string> {
  let body = '';
  try {
    for await (const chunk of response) {
      body += chunk.toString();
      if (body.length > maxErrorBody) break;
    }
  } catch {
    // the code alone still says something
  }
  let message = body.trim();
  try {
    message = (JSON.parse(body) as { message?: string }).message || message;
  } catch {
    // not a Status: the text as it came
  }
  return `${message || 'the apiserver refused the exec'} (HTTP ${response.statusCode})`;
}

function connectError(err: unknown): string {
  if (err instanceof Error) return err.message;
  // ws reports a failed connection as an ErrorEvent-like object
  const inner = (err as { error?: unknown; message?: unknown } | undefined) ?? {};
  if (inner.error instanceof Error) return inner.error.message;
  return typeof inner.message === 'string' && inner.message ? inner.message : String(err);
}

/**
 * The command's stderr with the wrapper's first line taken out: `<marker> <pid>`. Until that line is complete stderr
 * is held back (a few bytes); anything else first is passed through as the command's own output.
 */
class PidLine {
  pid: string | undefined;
  /** settles with the pid, or undefined once the first line turned out to be something else */
  readonly reported: Promise<string | undefined>;
  readonly #report: (pid: string | undefined) => void;
  #pending: Buffer | undefined = Buffer.alloc(0);
  readonly #marker: string;
  readonly #tail: OutputTail;

  constructor(marker: string, tail: OutputTail) {
    this.#marker = marker;
    this.#tail = tail;
    const { promise, resolve } = Promise.withResolvers<string | undefined>();
    this.reported = promise;
    this.#report = resolve;
  }

  push(chunk: Buffer): void {
    if (!this.#pending) return this.#tail.push(chunk);
    const held = Buffer.concat([this.#pending, chunk]);
    const newline = held.indexOf(0x0a);
    if (newline < 0) {
      this.#pending = held;
      if (held.length > this.#marker.length + 32) this.flush();
      return;
    }
    this.#pending = undefined;
    const match = new RegExp(`^${this.#marker} (\\d+)$`).exec(held.subarray(0, newline).toString('latin1'));
    if (!match) return this.flush(held);
    this.pid = match[1];
    this.#report(this.pid);
    if (newline + 1 < held.length) this.#tail.push(held.subarray(newline + 1));
  }

  /** What is held back goes to the output (the stream ended, or the line is too long to be the marker). */
  flush(held = this.#pending): void {
    if (held?.length) this.#tail.push(held);
    this.#pending = undefined;
    this.#report(this.pid);
  }
}
