// The Kube interface over the apiserver's REST API. @kubernetes/client-node supplies the configuration and the
// credentials (client certificates, ServiceAccount tokens it re-reads as they rotate); requests are plain JSON over
// one keep-alive connection pool, addressed through the fixed kind table, so every call is the same small code path
// whatever the kind (custom resources and status subresources included).
import { Agent as HttpAgent, request as httpRequest } from '../../engine/net/http.ts';
import type { RequestOptions } from 'node:https';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeError } from './errors.ts';
import type { DeleteOptions, Kube, KubeObject, ListOptions, ObjectKey, PatchOptions } from './kube.ts';
import type { TokenRequestSpec } from './kube.ts';
import { apiVersionOf, resourcePath, type KindName } from './resources.ts';

const contentTypes = { merge: 'application/merge-patch+json', json: 'application/json-patch+json' } as const;
const defaultTimeoutMs = 30_000;
const pageSize = 500;

interface Response {
  status: number;
  body: unknown;
  text: string;
}

export class HttpKube implements Kube {
  readonly #kc: KubeConfig;
  readonly #server: URL;
  readonly #timeoutMs: number;
  #agent: HttpAgent | HttpsAgent | undefined;

  constructor(kc: KubeConfig, opts: { timeoutMs?: number } = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error('The Kubernetes configuration names no current cluster.');
    this.#kc = kc;
    this.#server = new URL(cluster.server);
    this.#timeoutMs = opts.timeoutMs ?? defaultTimeoutMs;
  }

  async get<T extends KubeObject>(key: ObjectKey): Promise<T | undefined> {
    const res = await this.#request('GET', resourcePath(key.kind, key.namespace, key.name));
    if (res.status === 404) return undefined;
    return this.#object<T>(res);
  }

  async list<T extends KubeObject>(kind: KindName, opts: ListOptions = {}): Promise<T[]> {
    const items: T[] = [];
    let continueToken = '';
    do {
      const query = new URLSearchParams({ limit: String(pageSize) });
      if (opts.labelSelector) query.set('labelSelector', opts.labelSelector);
      if (continueToken) query.set('continue', continueToken);
      const list = this.#object<{
        items: (Omit<T, 'apiVersion' | 'kind'> & Partial<KubeObject>)[];
        metadata?: { continue?: string };
      }>(await this.#request('GET', `${resourcePath(kind, opts.namespace)}?${query}`));
      // list items come without apiVersion/kind; give them back so objects look the same however they were read
      const apiVersion = apiVersionOf(kind);
      for (const item of list.items)
        items.push({ ...item, apiVersion: item.apiVersion ?? apiVersion, kind: item.kind ?? kind } as T);
      continueToken = list.metadata?.continue ?? '';
    } while (continueToken);
    return items;
  }

  async create<T extends KubeObject>(obj: T): Promise<T> {
    const key = objectKey(obj);
    return this.#object<T>(await this.#request('POST', resourcePath(key.kind, key.namespace), obj));
  }

  async replace<T extends KubeObject>(obj: T): Promise<T> {
    const key = objectKey(obj);
    return this.#object<T>(await this.#request('PUT', resourcePath(key.kind, key.namespace, key.name), obj));
  }

  async replaceStatus<T extends KubeObject>(obj: T): Promise<T> {
    const key = objectKey(obj);
    return this.#object<T>(await this.#request('PUT', resourcePath(key.kind, key.namespace, key.name, 'status'), obj));
  }

  async patch<T extends KubeObject>(key: ObjectKey, patch: unknown, opts: PatchOptions = {}): Promise<T> {
    const path = resourcePath(key.kind, key.namespace, key.name, opts.status ? 'status' : undefined);
    return this.#object<T>(await this.#request('PATCH', path, patch, contentTypes[opts.type ?? 'merge']));
  }

  async delete(key: ObjectKey, opts: DeleteOptions = {}): Promise<boolean> {
    const body: Record<string, unknown> = {
      apiVersion: 'v1',
      kind: 'DeleteOptions',
      propagationPolicy: opts.propagationPolicy ?? 'Background',
    };
    if (opts.uid) body.preconditions = { uid: opts.uid };
    const res = await this.#request('DELETE', resourcePath(key.kind, key.namespace, key.name), body);
    if (res.status === 404) return false;
    this.#object(res);
    return true;
  }

  async createToken(namespace: string, name: string, spec: TokenRequestSpec): Promise<string> {
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(name)}/token`;
    const body = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec };
    const answer = this.#object<{ status?: { token?: string } }>(await this.#request('POST', path, body));
    if (!answer.status?.token) throw new Error(`the apiserver gave no token for ServiceAccount ${namespace}/${name}`);
    return answer.status.token;
  }

  /**
   * Any request by REST path, for callers that address kinds outside the fixed table (the CLI's discovery and
   * server-side apply). The parsed JSON answer, or undefined for 404.
   */
  async call<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T | undefined> {
    const res = await this.#request(method, path, body, contentType);
    return res.status === 404 ? undefined : this.#object<T>(res);
  }

  /** Answers 2xx and 404 to the caller; any other status becomes a KubeError. */
  async #request(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<Response> {
    const opts: RequestOptions = {};
    await this.#kc.applyToHTTPSOptions(opts);
    const headers: Record<string, string> = { Accept: 'application/json' };
    for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') headers[k] = v;
    if (opts.auth) headers.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) {
      headers['Content-Type'] = contentType;
      // without a length Node sends no body at all for DELETE, and the next request on the connection breaks
      headers['Content-Length'] = String(Buffer.byteLength(payload));
    }
    const url = new URL(path, this.#server);
    const res = await this.#send(url, { method, headers, agent: this.#agentFor(opts) }, payload);
    if (res.status >= 400 && res.status !== 404) throw errorFrom(method, url.pathname, res);
    return res;
  }

  #send(url: URL, opts: RequestOptions, payload: string | undefined): Promise<Response> {
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { ...opts, timeout: this.#timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: parseJson(text), text });
        });
      });
      req.on('timeout', () =>
        req.destroy(
          Object.assign(
            new Error(
              `the apiserver did not answer ${opts.method} ${url.pathname} within ${this.#timeoutMs} ms (timed out)`,
            ),
            { code: 'ETIMEDOUT' },
          ),
        ),
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  /** One keep-alive pool for the client's life, with the TLS settings the configuration gave. */
  #agentFor(opts: RequestOptions): HttpAgent | HttpsAgent {
    if (!this.#agent) {
      this.#agent =
        this.#server.protocol === 'http:'
          ? new HttpAgent({ keepAlive: true })
          : new HttpsAgent({
              keepAlive: true,
              ca: opts.ca,
              cert: opts.cert,
              key: opts.key,
              rejectUnauthorized: opts.rejectUnauthorized,
            });
    }
    return this.#agent;
  }

  #object<T>(res: Response): T {
    if (res.status === 404) throw errorFrom('GET', '', res);
    if (typeof res.body !== 'object' || res.body === null)
      throw new Error(`The apiserver answered ${res.status} with something that is not a JSON object.`);
    return res.body as T;
  }

  close(): void {
    this.#agent?.destroy();
  }
}

function objectKey(obj: KubeObject): ObjectKey {
  return { kind: obj.kind as KindName, namespace: obj.metadata.namespace, name: obj.metadata.name };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function errorFrom(method: string, path: string, res: Response): KubeError {
  const status = res.body as { reason?: string; message?: string } | undefined;
  const message = status?.message ?? (res.text.trim().slice(0, 300) || `HTTP ${res.status}`);
  return new KubeError(res.status, status?.reason ?? 'Unknown', `${method} ${path} failed: ${message}`);
}
