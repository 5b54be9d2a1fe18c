// The backend's small S3 requests (GET with ranges, single PUT, HEAD, DELETE, ListObjectsV2) signed here with AWS
// Signature Version 4 and sent over node:http(s). The AWS SDK takes about a tenth of a second of CPU to load, more
// than an incremental backup's requests themselves; it now loads only for multipart uploads or when credentials
// must come from its provider chain. Failures are shaped like the SDK's (name = S3 error code, $metadata with the
// HTTP status), so one classifier reads both.
import { createHash, createHmac } from 'node:crypto';
import { Agent as HttpAgent, request as httpRequest } from '../net/http.ts';
import type { IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { S3Credentials } from './s3-settings.ts';
import { HttpGetter } from '../net/http-get.ts';
import { BodyCollector } from '../net/body-collector.ts';
import { rangeLength, wholeAnswer } from './s3-range.ts';
import { xmlElements, xmlText } from './s3-xml.ts';

export interface SignedS3Options {
  /** http(s)://host[:port] */
  endpoint: string;
  region: string;
  bucket: string;
  pathStyle: boolean;
  credentials: S3Credentials;
  ca?: Buffer;
  maxSockets: number;
  connectTimeoutMs: number;
  idleTimeoutMs: number;
}

export interface S3Listing {
  objects: { key: string; size: number }[];
  /** the continuation token of the next page, when there is one */
  next?: string;
}

/** One version of an object, or a delete marker, from a listing of versions. */
export interface ObjectVersion {
  key: string;
  versionId: string;
  size: number;
  /** milliseconds since the epoch */
  lastModified: number;
  deleteMarker: boolean;
}

export interface VersionListing {
  versions: ObjectVersion[];
  /** where the next page starts, when there is one */
  next?: { key: string; versionId: string };
}

export interface ObjectHead {
  size: number;
  /** S3 Object Lock retention of this version, when it has some */
  retainUntil?: Date;
  lockMode?: string;
  legalHold: boolean;
}

/** The requests the S3 backend makes, however they are sent. */
export interface S3Requests {
  /** `versionId` only from signed requests (recovery mode) */
  get(
    key: string,
    range: string | undefined,
    signal?: AbortSignal,
    versionId?: string,
  ): Promise<{ bytes: Uint8Array; contentRange?: string }>;
  /** `sha256`: the body's hex SHA-256, when the caller has it; `headers` only from signed requests (object lock) */
  put(
    key: string,
    body: Uint8Array,
    signal?: AbortSignal,
    sha256?: string,
    headers?: Record<string, string>,
  ): Promise<void>;
  head(key: string): Promise<{ size: number }>;
  delete(key: string): Promise<void>;
  headBucket(): Promise<void>;
  list(prefix: string, token: string | undefined, signal?: AbortSignal): Promise<S3Listing>;
  close(): void;
}

interface Response {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

const emptyHash = createHash('sha256').update('').digest('hex');

export class SignedS3 implements S3Requests {
  readonly #opts: SignedS3Options;
  readonly #url: URL;
  readonly #agent: HttpAgent;
  /** the endpoint's host, or the bucket's below it (virtual-hosted style) */
  readonly #hostname: string;
  /** objects' GETs, whose bodies are read straight into their buffers (net/http-get.ts) */
  readonly #getter: HttpGetter;

  constructor(opts: SignedS3Options) {
    this.#opts = opts;
    this.#url = new URL(opts.endpoint);
    this.#agent =
      this.#url.protocol === 'https:'
        ? new HttpsAgent({ keepAlive: true, maxSockets: opts.maxSockets, ca: opts.ca })
        : new HttpAgent({ keepAlive: true, maxSockets: opts.maxSockets });
    this.#hostname = opts.pathStyle ? this.#url.hostname : `${opts.bucket}.${this.#url.hostname}`;
    this.#getter = new HttpGetter({
      protocol: this.#url.protocol === 'https:' ? 'https:' : 'http:',
      // a socket takes an IPv6 address without the URL's brackets
      hostname: this.#hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(this.#url.port) || (this.#url.protocol === 'https:' ? 443 : 80),
      ca: opts.ca,
      maxSockets: opts.maxSockets,
      connectTimeoutMs: opts.connectTimeoutMs,
      idleTimeoutMs: opts.idleTimeoutMs,
    });
  }

  async get(
    key: string,
    range: string | undefined,
    signal?: AbortSignal,
    versionId?: string,
  ): Promise<{ bytes: Buffer; contentRange?: string }> {
    const { path, headers } = this.#sign('GET', key, versioned(versionId), range ? { range } : {});
    const res = await this.#getter.get(path, headers, signal, rangeLength(range));
    if (res.status >= 300) throw s3Error(res);
    if (range && res.status === 200) return wholeAnswer(range, res.body);
    const contentRange = res.headers['content-range'];
    return { bytes: res.body, contentRange: typeof contentRange === 'string' ? contentRange : undefined };
  }

  /**
   * With `sha256` given, the request is signed with it as the payload hash, unchecked here: the server hashes the body
   * and refuses it if the two differ (XAmzContentSHA256Mismatch), so bytes that changed after the caller hashed them
   * (and named the file by that hash) are not stored.
   */
  async put(
    key: string,
    body: Uint8Array,
    signal?: AbortSignal,
    sha256?: string,
    headers: Record<string, string> = {},
  ): Promise<void> {
    await this.#send('PUT', key, {}, headers, body, signal, sha256);
  }

  async head(key: string, versionId?: string): Promise<ObjectHead> {
    const res = await this.#send('HEAD', key, versioned(versionId), {});
    const until = res.headers['x-amz-object-lock-retain-until-date'];
    const mode = res.headers['x-amz-object-lock-mode'];
    return {
      size: Number(res.headers['content-length'] ?? 0),
      retainUntil: typeof until === 'string' ? new Date(until) : undefined,
      lockMode: typeof mode === 'string' ? mode : undefined,
      legalHold: res.headers['x-amz-object-lock-legal-hold'] === 'ON',
    };
  }

  async delete(key: string, versionId?: string): Promise<void> {
    await this.#send('DELETE', key, versioned(versionId), {});
  }

  /** Every version and delete marker under `prefix`, a page at a time, newest first within a key. */
  async listVersions(prefix: string, from: VersionListing['next'], signal?: AbortSignal): Promise<VersionListing> {
    const query: Record<string, string> = { versions: '', prefix, 'encoding-type': 'url' };
    if (from) Object.assign(query, { 'key-marker': from.key, 'version-id-marker': from.versionId });
    const xml = (await this.#send('GET', undefined, query, {}, undefined, signal)).body.toString('utf8');
    const read = (x: string, deleteMarker: boolean): ObjectVersion => ({
      key: urlDecoded(xmlText(x, 'Key') ?? ''),
      versionId: xmlText(x, 'VersionId') ?? '',
      size: Number(xmlText(x, 'Size') ?? 0),
      lastModified: Date.parse(xmlText(x, 'LastModified') ?? ''),
      deleteMarker,
    });
    const versions = [
      ...xmlElements(xml, 'Version').map((x) => read(x, false)),
      ...xmlElements(xml, 'DeleteMarker').map((x) => read(x, true)),
    ];
    if (xmlText(xml, 'IsTruncated') !== 'true') return { versions };
    const key = urlDecoded(xmlText(xml, 'NextKeyMarker') ?? '');
    return { versions, next: { key, versionId: xmlText(xml, 'NextVersionIdMarker') ?? '' } };
  }

  /** PutObjectRetention on the object's current version. */
  async putRetention(key: string, mode: string, until: Date): Promise<void> {
    const body = Buffer.from(
      `<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Mode>${mode}</Mode><RetainUntilDate>${until.toISOString()}</RetainUntilDate></Retention>`,
    );
    await this.#send('PUT', key, { retention: '' }, { 'content-md5': contentMD5(body) }, body);
  }

  /** Whether the bucket was created with S3 Object Lock (which also turns on versioning). */
  async objectLockEnabled(): Promise<boolean> {
    try {
      const xml = (await this.#send('GET', undefined, { 'object-lock': '' }, {})).body.toString('utf8');
      return xmlText(xml, 'ObjectLockEnabled') === 'Enabled';
    } catch (err) {
      if ((err as Error).name === 'ObjectLockConfigurationNotFoundError') return false;
      throw err;
    }
  }

  async headBucket(): Promise<void> {
    await this.#send('HEAD', undefined, {}, {});
  }

  async list(prefix: string, token: string | undefined, signal?: AbortSignal): Promise<S3Listing> {
    const query: Record<string, string> = { 'list-type': '2', prefix, 'encoding-type': 'url' };
    if (token !== undefined) query['continuation-token'] = token;
    const xml = (await this.#send('GET', undefined, query, {}, undefined, signal)).body.toString('utf8');
    const objects = xmlElements(xml, 'Contents').map((contents) => ({
      key: urlDecoded(xmlText(contents, 'Key') ?? ''),
      size: Number(xmlText(contents, 'Size') ?? 0),
    }));
    const truncated = xmlText(xml, 'IsTruncated') === 'true';
    return { objects, next: truncated ? xmlText(xml, 'NextContinuationToken') : undefined };
  }

  close(): void {
    this.#agent.destroy();
    this.#getter.close();
  }

  /** The path (with its query) and the headers of a request signed with SigV4. */
  #sign(
    method: string,
    key: string | undefined,
    query: Record<string, string>,
    extra: Record<string, string>,
    body?: Uint8Array,
    sha256?: string,
  ): { path: string; headers: Record<string, string> } {
    const { bucket, pathStyle } = this.#opts;
    const base = this.#url.pathname.replace(/\/+$/, '');
    const objectPath = key === undefined ? '' : `/${key}`;
    const path = `${base}${pathStyle ? `/${bucket}` : ''}${objectPath}` || '/';
    const host = pathStyle ? this.#url.host : `${bucket}.${this.#url.host}`;
    const payloadHash = sha256 ?? (body ? createHash('sha256').update(body).digest('hex') : emptyHash);
    const headers: Record<string, string> = {
      ...extra,
      host,
      'x-amz-content-sha256': payloadHash,
      'x-amz-date': amzDate(new Date()),
    };
    if (body) headers['content-length'] = String(body.length);
    if (this.#opts.credentials.sessionToken) headers['x-amz-security-token'] = this.#opts.credentials.sessionToken;
    const canonicalPath = path.split('/').map(uriEncode).join('/');
    const canonicalQuery = Object.keys(query)
      .sort()
      .map((k) => `${uriEncode(k)}=${uriEncode(query[k])}`)
      .join('&');
    headers.authorization = signV4(
      { method, path: canonicalPath, query: canonicalQuery, headers, payloadHash },
      this.#opts.credentials,
      this.#opts.region,
    );
    return { path: canonicalQuery ? `${canonicalPath}?${canonicalQuery}` : canonicalPath, headers };
  }

  /** `key` undefined: a request on the bucket itself. */
  #send(
    method: string,
    key: string | undefined,
    query: Record<string, string>,
    extra: Record<string, string>,
    body?: Uint8Array,
    signal?: AbortSignal,
    sha256?: string,
  ): Promise<Response> {
    const { path, headers } = this.#sign(method, key, query, extra, body, sha256);
    const send = this.#url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(
        {
          protocol: this.#url.protocol,
          hostname: this.#hostname,
          port: this.#url.port,
          method,
          path,
          headers,
          agent: this.#agent,
          signal,
          timeout: this.#opts.idleTimeoutMs,
        },
        (res) => {
          // a HEAD's length is the object's, and no body follows
          const body = new BodyCollector(method === 'HEAD' ? undefined : res.headers['content-length']);
          res.on('data', (c: Buffer) => body.add(c));
          res.on('error', reject);
          res.on('end', () => {
            const out: Response = { status: res.statusCode ?? 0, headers: res.headers, body: body.bytes() };
            if (out.status >= 300) reject(s3Error(out));
            else resolve(out);
          });
        },
      );
      // a socket silent this long is dead (a stopped server, a lost route): the retry wrapper tries again
      req.on('timeout', () =>
        req.destroy(
          Object.assign(new Error(`no answer from ${this.#url.host} for ${this.#opts.idleTimeoutMs} ms`), {
            code: 'ETIMEDOUT',
          }),
        ),
      );
      req.on('socket', (socket) => {
        if (socket.connecting) {
          const timer = setTimeout(
            () => req.destroy(Object.assign(new Error(`cannot connect to ${this.#url.host}`), { code: 'ETIMEDOUT' })),
            this.#opts.connectTimeoutMs,
          );
          socket.once('connect', () => clearTimeout(timer));
          socket.once('secureConnect', () => clearTimeout(timer));
          socket.once('close', () => clearTimeout(timer));
        }
      });
      req.on('error', reject);
      req.end(body);
    });
  }
}

/** A request as SigV4 signs it: the path and query already URI-encoded, header names in any case. */
export interface SignedRequest {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  /** hex SHA-256 of the body, also sent as x-amz-content-sha256 */
  payloadHash: string;
}

/** The Authorization header of AWS Signature Version 4 for S3; the time is the request's x-amz-date header. */
export function signV4(req: SignedRequest, credentials: S3Credentials, region: string): string {
  const lower = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k.toLowerCase(), v]));
  const date = lower['x-amz-date'];
  const day = date.slice(0, 8);
  const scope = `${day}/${region}/s3/aws4_request`;
  const names = Object.keys(lower).sort();
  const canonicalHeaders = names.map((n) => `${n}:${lower[n].trim().replace(/\s+/g, ' ')}\n`).join('');
  const signedHeaders = names.join(';');
  const canonicalRequest = [req.method, req.path, req.query, canonicalHeaders, signedHeaders, req.payloadHash].join(
    '\n',
  );
  const toSign = ['AWS4-HMAC-SHA256', date, scope, createHash('sha256').update(canonicalRequest).digest('hex')].join(
    '\n',
  );
  const hmac = (k: string | Buffer, data: string): Buffer => createHmac('sha256', k).update(data).digest();
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${credentials.secretAccessKey}`, day), region), 's3'), 'aws4_request');
  const signature = createHmac('sha256', signingKey).update(toSign).digest('hex');
  return `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}

/** The Content-MD5 header S3 asks of requests that set retention (so a changed body is refused). */
export function contentMD5(body: Uint8Array): string {
  return createHash('md5').update(body).digest('base64');
}

/** A key as S3 sends it with encoding-type=url: percent-encoded, a space as '+'. */
function urlDecoded(s: string): string {
  return decodeURIComponent(s.replace(/\+/g, ' '));
}

function versioned(versionId: string | undefined): Record<string, string> {
  return versionId === undefined ? {} : { versionId };
}

/** 20261122T024312Z */
function amzDate(d: Date): string {
  return d
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/** RFC 3986 encoding, as SigV4 wants it: everything but unreserved characters. */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** An error answer as the SDK would raise it: the S3 error code as name (HEAD answers carry none). */
function s3Error(res: { status: number; body: Buffer }): Error {
  const text = res.body.toString('utf8');
  const code = xmlText(text, 'Code');
  const message = xmlText(text, 'Message') ?? `HTTP ${res.status}`;
  return Object.assign(new Error(message), { name: code ?? 'Unknown', $metadata: { httpStatusCode: res.status } });
}
