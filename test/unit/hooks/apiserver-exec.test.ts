// apiserverExec against a stand-in for the apiserver's pods/exec endpoint that speaks the channel protocol over a
// real WebSocket and runs the command as a real local process (the "container" is this machine): exit codes from the
// status channel, the wrapper's pid line removed, output bounded, a hanging command and its children really killed at
// the timeout, a container without sh, and a refused handshake reported with the apiserver's own message.
// test/cluster/hooks-exec.test.ts does the same against the box's apiserver and kubelets.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { KubeConfig } from '@kubernetes/client-node';
import { apiserverExec } from '../../../src/shared/hooks/apiserver-exec.ts';
import type { PodExec } from '../../../src/shared/hooks/exec.ts';
import { outputLimit } from '../../../src/shared/hooks/output.ts';

interface ServerSocket {
  send(data: Buffer): void;
  close(): void;
  terminate(): void;
  on(event: 'close', listener: () => void): void;
}
const { WebSocketServer } = createRequire(import.meta.resolve('@kubernetes/client-node'))('isomorphic-ws') as {
  WebSocketServer: new (opts: { noServer: true; handleProtocols: (p: Set<string>) => string }) => {
    handleUpgrade(req: unknown, socket: unknown, head: Buffer, cb: (ws: ServerSocket) => void): void;
  };
};

/** Pods the stand-in knows: "app" has sh, "slow" too but starts commands late, "distroless" has no sh. */
const pods = new Set(['app', 'slow', 'distroless']);
const execs: { pod: string; command: string[] }[] = [];
/** what a failing test may leave running: the processes and their streams, and sleeps by their unique argument */
const leftovers: (() => void)[] = [];
let server: Server;
let exec: PodExec;

function frame(channel: number, data: Buffer | string): Buffer {
  return Buffer.concat([Buffer.from([channel]), Buffer.from(data)]);
}

function status(code: number | null): object {
  if (code === 0) return { kind: 'Status', status: 'Success', metadata: {} };
  return {
    kind: 'Status',
    status: 'Failure',
    reason: 'NonZeroExitCode',
    message: `command terminated with non-zero exit code: ${code}`,
    details: { causes: [{ reason: 'ExitCode', message: String(code ?? 137) }] },
  };
}

function serve(ws: ServerSocket, pod: string, command: string[]): void {
  if (pod === 'distroless' && command[0] === 'sh') {
    const message =
      'Internal error occurred: error executing command in container: failed to exec in container: ' +
      'OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": executable file not found in $PATH: unknown';
    ws.send(frame(3, JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'InternalError', message })));
    ws.close();
    return;
  }
  if (pod === 'slow') setTimeout(() => start(ws, command), 800);
  else start(ws, command);
}

function start(ws: ServerSocket, command: string[]): void {
  const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  leftovers.push(() => {
    child.kill('SIGKILL');
    child.stdout.destroy();
    child.stderr.destroy();
    ws.terminate();
  });
  child.stdout.on('data', (d: Buffer) => ws.send(frame(1, d)));
  child.stderr.on('data', (d: Buffer) => ws.send(frame(2, d)));
  child.on('error', (err) => {
    ws.send(
      frame(3, JSON.stringify({ kind: 'Status', status: 'Failure', reason: 'InternalError', message: err.message })),
    );
    ws.close();
  });
  child.on('close', (code) => {
    ws.send(frame(3, JSON.stringify(status(code))));
    ws.close();
  });
  // as with a real runtime, a closed stream does not stop the process: only the kill does
}

before(async () => {
  const wss = new WebSocketServer({ noServer: true, handleProtocols: () => 'v4.channel.k8s.io' });
  server = createServer((_req, res) => res.writeHead(400).end('upgrade required'));
  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const [, pod] = /^\/api\/v1\/namespaces\/app\/pods\/([^/]+)\/exec$/.exec(url.pathname) ?? [];
    if (req.headers.authorization !== 'Bearer exec-token') {
      const body = JSON.stringify({
        kind: 'Status',
        status: 'Failure',
        reason: 'Forbidden',
        message: `pods "${pod}" is forbidden: User "system:serviceaccount:app:nobody" cannot create resource "pods/exec"`,
      });
      socket.end(
        `HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      return;
    }
    if (!pods.has(pod)) {
      const body = JSON.stringify({
        kind: 'Status',
        status: 'Failure',
        reason: 'NotFound',
        message: `pods "${pod}" not found`,
      });
      socket.end(
        `HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      return;
    }
    const command = url.searchParams.getAll('command');
    execs.push({ pod, command });
    wss.handleUpgrade(req, socket, head, (ws) => serve(ws, pod, command));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  exec = apiserverExec(kubeConfig('exec-token'));
});
after(() => {
  for (const cleanup of leftovers) cleanup();
  server.close();
});

function kubeConfig(token: string, url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

const req = (command: string[], extra: { pod?: string; timeoutMs?: number; signal?: AbortSignal } = {}) => ({
  namespace: 'app',
  pod: extra.pod ?? 'app',
  container: 'main',
  command,
  timeoutMs: extra.timeoutMs ?? 20_000,
  signal: extra.signal,
});

/** A sleep argument of this run only, so the test can look for the process by it. */
function sleepTag(): string {
  const tag = `sleep ${Math.floor(36_000 + Math.random() * 60_000)}`;
  leftovers.push(() => running(tag) && execFileSync('pkill', ['-KILL', '-f', tag]));
  return tag;
}

function running(pattern: string): boolean {
  try {
    execFileSync('pgrep', ['-f', pattern]);
    return true;
  } catch {
    return false;
  }
}

describe('apiserverExec', () => {
  it('gives the exit code and the output, without the wrapper line', async () => {
    const ok = await exec.exec(req(['sh', '-c', 'echo out; echo err >&2']));
    assert.deepEqual({ ...ok, output: undefined }, { exitCode: 0, timedOut: false, output: undefined });
    // two pipes: their order is not the order written; no other line (the wrapper's) is there
    assert.deepEqual(ok.output.split('\n').sort(), ['', 'err', 'out']);
    const failed = await exec.exec(req(['sh', '-c', 'echo "cannot lock" >&2; exit 3']));
    assert.deepEqual(failed, { exitCode: 3, timedOut: false, output: 'cannot lock\n' });
    assert.match(
      execs.at(-1)!.command.join(' '),
      /^sh -c echo "ferry-hook-pid-[0-9a-f]+ \$\$" >&2; exec "\$@" sh sh -c/,
    );
  });

  it('keeps the last 4 KiB of a command printing 1 MiB', async () => {
    const result = await exec.exec(req(['sh', '-c', 'head -c 1048576 /dev/zero | tr "\\0" a; echo; echo last line']));
    assert.equal(result.exitCode, 0);
    assert.equal(Buffer.byteLength(result.output), outputLimit);
    assert.ok(result.output.endsWith('aaaa\nlast line\n'));
  });

  it('kills a hanging command and what it started at the timeout', async () => {
    const sleep = sleepTag();
    const started = Date.now();
    const result = await exec.exec(
      req(['sh', '-c', `echo waiting; ${sleep} & while :; do ${sleep}; done`], { timeoutMs: 1500 }),
    );
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, undefined);
    assert.equal(result.error, undefined);
    assert.equal(result.output, 'waiting\n');
    assert.ok(Date.now() - started < 8000, `took ${Date.now() - started} ms`);
    assert.match(execs.at(-1)!.command.join(' '), /^sh -c .*kill -KILL.* sh \d+$/);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(running(sleep), false, 'the command and its children are gone');
  });

  it('kills a command that had not started yet at the timeout, once it reports its pid', async () => {
    const sleep = sleepTag();
    const result = await exec.exec(req(sleep.split(' '), { pod: 'slow', timeoutMs: 200 }));
    assert.deepEqual(result, { timedOut: true, output: '' });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(running(sleep), false);
  });

  it('kills the command when the signal aborts', async () => {
    const sleep = sleepTag();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const result = await exec.exec(req(sleep.split(' '), { signal: controller.signal }));
    assert.deepEqual(result, { timedOut: false, output: '', error: 'canceled' });
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(running(sleep), false);
  });

  it('runs the command directly in a container without sh; at the timeout it says the process may still run', async () => {
    const ok = await exec.exec(req(['echo', 'no shell here'], { pod: 'distroless' }));
    assert.deepEqual(ok, { exitCode: 0, timedOut: false, output: 'no shell here\n' });
    assert.deepEqual(execs.at(-1), { pod: 'distroless', command: ['echo', 'no shell here'] });
    const sleep = sleepTag();
    const hung = await exec.exec(req(sleep.split(' '), { pod: 'distroless', timeoutMs: 1000 }));
    assert.equal(hung.timedOut, true);
    assert.match(hung.error ?? '', /may still run/);
    // the stand-in, like a runtime, leaves it running (that is what the error warns of) until after()
  });

  it('reports a refused exec with the apiserver message, never throwing', async () => {
    const gone = await exec.exec(req(['true'], { pod: 'db-9' }));
    assert.deepEqual(gone, { timedOut: false, output: '', error: 'pods "db-9" not found (HTTP 404)' });
    const forbidden = await apiserverExec(kubeConfig('other-token')).exec(req(['true']));
    assert.match(
      forbidden.error ?? '',
      /^pods "app" is forbidden: .*cannot create resource "pods\/exec" \(HTTP 403\)$/,
    );
    const refused = await apiserverExec(kubeConfig('exec-token', 'http://127.0.0.1:1')).exec(req(['true']));
    assert.match(refused.error ?? '', /ECONNREFUSED/);
  });
});
