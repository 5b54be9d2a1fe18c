// A minimal Kubernetes REST client for the box and its tests: JSON over HTTPS with the box's client certificates.
// Paths are API paths ("/api/v1/namespaces/x/pods"); objects are plain JSON.

import { Agent, request } from 'node:https';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface KubeAccess {
  server: string;
  ca: string;
  cert: string;
  key: string;
}

/** Access for one of the identities whose certificate the box issued (admin, storage-driver, ...). */
export function accessFromPki(server: string, pkiDir: string, identity = 'admin'): KubeAccess {
  const read = (name: string): string => readFileSync(join(pkiDir, name), 'utf8');
  return { server, ca: read('ca.crt'), cert: read(`${identity}.crt`), key: read(`${identity}.key`) };
}

export class KubeError extends Error {
  readonly status: number;
  readonly reason: string;
  constructor(status: number, reason: string, message: string) {
    super(message);
    this.status = status;
    this.reason = reason;
  }
}

export type KubeObject = Record<string, any>;

export type PatchType = 'merge' | 'strategic' | 'json' | 'apply';

const patchTypes: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  apply: 'application/apply-patch+yaml',
};

export class Kube {
  readonly server: string;
  private readonly access: KubeAccess;
  private readonly agent: Agent;
  private readonly bearer?: string;

  /** With a bearer token the requests authenticate as that token's owner instead of the client certificate. */
  constructor(access: KubeAccess, bearer?: string) {
    this.server = access.server;
    this.access = access;
    this.bearer = bearer;
    this.agent = new Agent({
      ca: access.ca,
      cert: bearer ? undefined : access.cert,
      key: bearer ? undefined : access.key,
      keepAlive: true,
    });
  }

  /** Another client on the same server authenticating with a token. */
  withToken(token: string): Kube {
    return new Kube(this.access, token);
  }

  async request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<KubeObject> {
    const url = new URL(path, this.server);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = { Accept: 'application/json' };
    // an explicit length: a chunked body on DELETE left the kept-alive connection out of step, so the next
    // request on it was answered 400
    if (payload !== undefined)
      Object.assign(headers, { 'Content-Type': contentType, 'Content-Length': String(Buffer.byteLength(payload)) });
    if (this.bearer) headers.Authorization = `Bearer ${this.bearer}`;
    const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(url, { method, agent: this.agent, headers }, (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          data += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: data }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(payload);
    });
    const parsed = parseJson(text);
    if (status >= 400) {
      const message = typeof parsed?.message === 'string' ? parsed.message : text.slice(0, 500);
      throw new KubeError(status, String(parsed?.reason ?? ''), `${method} ${path} answered ${status}: ${message}`);
    }
    return parsed ?? { text };
  }

  get(path: string): Promise<KubeObject> {
    return this.request('GET', path);
  }

  /** The object, or undefined when it does not exist. */
  async find(path: string): Promise<KubeObject | undefined> {
    try {
      return await this.get(path);
    } catch (err) {
      if (err instanceof KubeError && err.status === 404) return undefined;
      throw err;
    }
  }

  create(path: string, obj: KubeObject): Promise<KubeObject> {
    return this.request('POST', path, obj);
  }

  patch(path: string, patch: unknown, type: PatchType = 'merge'): Promise<KubeObject> {
    const query = type === 'apply' ? `${path.includes('?') ? '&' : '?'}fieldManager=ferrybox-tests&force=true` : '';
    return this.request('PATCH', path + query, patch, patchTypes[type]);
  }

  /** Deletes; a missing object is fine. */
  async delete(path: string, options?: KubeObject): Promise<void> {
    try {
      await this.request('DELETE', path, options);
    } catch (err) {
      if (!(err instanceof KubeError && err.status === 404)) throw err;
    }
  }

  /** Polls the object until check returns a value other than undefined, or fails after timeoutMs naming what. */
  async waitFor<T>(
    path: string,
    what: string,
    check: (obj: KubeObject) => T | undefined,
    timeoutMs = 60_000,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last: KubeObject | undefined;
    for (;;) {
      last = await this.find(path);
      const value = last === undefined ? undefined : check(last);
      if (value !== undefined) return value;
      if (Date.now() > deadline) {
        const seen =
          last === undefined ? 'it does not exist' : `last seen: ${JSON.stringify(last.status ?? last).slice(0, 1500)}`;
        throw new Error(`Timed out after ${timeoutMs / 1000} s waiting for ${what} (${path}); ${seen}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  close(): void {
    this.agent.destroy();
  }
}

function parseJson(text: string): KubeObject | undefined {
  try {
    return JSON.parse(text) as KubeObject;
  } catch {
    return undefined;
  }
}
