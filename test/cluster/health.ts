// Waiting for the box's servers: poll a health URL until it answers 200, failing early (with the log tail) when
// the process serving it has died.

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Daemon } from './daemons.ts';
import { daemonRunning, logTail } from './daemons.ts';

export interface TlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
}

export function httpStatus(url: string, tls: TlsOptions = {}): Promise<number> {
  return new Promise((resolve) => {
    const u = new URL(url);
    const options =
      u.protocol === 'https:' ? { ...tls, rejectUnauthorized: tls.ca !== undefined, timeout: 2000 } : { timeout: 2000 };
    const req = (u.protocol === 'https:' ? httpsRequest : httpRequest)(u, options, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end();
  });
}

export async function waitHealthy(d: Daemon, url: string, timeoutMs: number, tls: TlsOptions = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await httpStatus(url, tls)) === 200) return;
    if (!(await daemonRunning(d))) {
      throw new Error(`${d.name} exited while starting; the end of ${d.log}:\n${await logTail(d)}`);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${d.name} was not healthy at ${url} within ${timeoutMs / 1000} s; the end of ${d.log}:\n${await logTail(d)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
