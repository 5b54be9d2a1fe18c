// S3 backend: restic's layout under an optional prefix in one bucket. Small files go up in one PUT, large ones as
// parallel multipart uploads; S3 makes an object visible only once complete, which gives save() its atomicity.
// With credentials at hand (given, or AWS_* variables) requests are signed here and the AWS SDK loads only for a
// multipart upload; otherwise the SDK sends them all, with its provider chain finding credentials.

import { objectPath, PermanentError, typeFolders } from './backend.ts';
import type { Backend, FileInfo, FileType, Handle, ObjectLockPolicy, Retention } from './backend.ts';
import { checkHandle, isNotExistError, NotExistError, rangeEnd } from './errors.ts';
import { ObjectLocker, removeVersions } from './s3-object-lock.ts';
import { VersionPicker } from './s3-versions.ts';
import {
  connectTimeoutMs,
  credentialsFromEnv,
  defaultMaxSockets,
  idleTimeoutMs,
  readCa,
  regionOf,
} from './s3-settings.ts';
import type { S3ClientOptions } from './s3-settings.ts';
import { SignedS3, type S3Requests } from './s3-signed.ts';
import type { SdkRequests } from './s3-sdk.ts';
import { classifyS3Error } from './s3-errors.ts';
import type { S3Target } from './s3-errors.ts';

export interface S3Options extends S3ClientOptions {
  bucket: string;
  /** folder inside the bucket holding the repository; '' for the bucket root */
  prefix?: string;
  /** objects above this size are uploaded in parts; packs (about 17 MiB) stay below it and take one request */
  multipartAbove?: number;
  /** size of those parts (S3's minimum part is 5 MiB) */
  partSize?: number;
  /** parts of one object in flight at once */
  partsInFlight?: number;
  /** S3 Object Lock retention for every object written (the bucket must have been created with Object Lock) */
  objectLock?: ObjectLockPolicy;
  /** read what the objects' versions hold, past delete markers and overwrites (s3-versions.ts); writes only locks */
  recoverVersions?: boolean;
}

// a multipart upload costs three requests more than a PUT and loads the AWS SDK, so packs (below the threshold) take
// one request each, as restic's PUTs do
const defaultMultipartAbove = 64 * 1024 * 1024;
const defaultPartSize = 8 * 1024 * 1024;
const defaultPartsInFlight = 4;

function trimSlashes(s: string): string {
  return s.replace(/^\/+|\/+$/g, '');
}

/** The endpoint without any user:password part, for messages. */
function publicEndpoint(endpoint: string): string {
  const url = new URL(endpoint);
  url.username = '';
  url.password = '';
  return url.toString().replace(/\/$/, '');
}

export class S3Backend implements Backend {
  readonly location: string;
  #opts: S3Options;
  #requests: Promise<S3Requests>;
  #sdk: Promise<SdkRequests> | undefined;
  #target: S3Target;
  #prefix: string;
  #multipartAbove: number;
  #partSize: number;
  #partsInFlight: number;
  #bucketChecked: Promise<void> | undefined;
  #locker: ObjectLocker | undefined;
  #lockChecked: Promise<void> | undefined;
  #picker: VersionPicker | undefined;
  #signed: SignedS3 | undefined;
  #bucketLocks: Promise<boolean> | undefined;
  readonly retention: Retention | undefined;

  constructor(opts: S3Options) {
    this.#opts = opts;
    this.#prefix = trimSlashes(opts.prefix ?? '');
    const endpoint = publicEndpoint(opts.endpoint);
    this.location = `s3:${endpoint}/${opts.bucket}${this.#prefix ? `/${this.#prefix}` : ''}`;
    this.#target = { location: this.location, endpoint, bucket: opts.bucket };
    this.#partSize = Math.max(opts.partSize ?? defaultPartSize, 5 * 1024 * 1024);
    this.#multipartAbove = Math.max(opts.multipartAbove ?? defaultMultipartAbove, this.#partSize);
    this.#partsInFlight = opts.partsInFlight ?? defaultPartsInFlight;
    const credentials = opts.credentials ?? credentialsFromEnv();
    const signed = credentials
      ? new SignedS3({
          endpoint: opts.endpoint,
          region: regionOf(opts),
          bucket: opts.bucket,
          pathStyle: opts.pathStyle ?? true,
          credentials,
          ca: opts.caFile ? readCa(opts.caFile) : undefined,
          maxSockets: opts.maxSockets ?? defaultMaxSockets,
          connectTimeoutMs,
          idleTimeoutMs,
        })
      : undefined;
    this.#signed = signed;
    this.#requests = signed ? Promise.resolve(signed) : this.#sdkRequests();
    if ((opts.objectLock || opts.recoverVersions) && !signed) {
      throw new PermanentError(
        `${opts.objectLock ? 'objectLock' : 'recoverVersions'} on ${this.location} needs the S3 credentials at hand: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or pass credentials.`,
      );
    }
    if (signed && opts.objectLock) {
      const locker = new ObjectLocker(signed, opts.objectLock, this.#target);
      this.#locker = locker;
      this.retention = { policy: locker.policy, extend: (h) => this.#extend(locker, h) };
      // an object must go up in one PUT to carry its retention: S3 takes up to 5 GiB in one
      this.#multipartAbove = 5 * 1024 ** 3;
    }
    if (signed && opts.recoverVersions) this.#picker = new VersionPicker(signed);
    // a failure to load the SDK is reported by the first request that needs it
    this.#requests.catch(() => undefined);
  }

  #sdkRequests(): Promise<SdkRequests> {
    this.#sdk ??= import('./s3-sdk.ts').then((m) => new m.SdkRequests(this.#opts, this.#opts.bucket));
    return this.#sdk;
  }

  #key(h: Handle): string {
    checkHandle(h);
    return this.#prefix ? `${this.#prefix}/${objectPath(h)}` : objectPath(h);
  }

  /**
   * A missing bucket answers HEAD-object requests with a bare 404, indistinguishable from a missing object, so such
   * a 404 is followed by one check of the bucket (remembered; a failed check is retried by the next call). Every
   * other request names a missing bucket in its answer's error code, so the usual path costs no extra request.
   */
  #ready(): Promise<void> {
    this.#bucketChecked ??= this.#requests
      .then((r) => r.headBucket())
      .then(
        () => undefined,
        (err: unknown) => {
          this.#bucketChecked = undefined;
          throw classifyS3Error(err, this.#target);
        },
      );
    return this.#bucketChecked;
  }

  /** With an object-lock policy, the bucket is checked for Object Lock before the first request. */
  #lockReady(): Promise<void> {
    if (!this.#locker) return Promise.resolve();
    this.#lockChecked ??= this.#locker.checkBucket().catch((err: unknown) => {
      this.#lockChecked = undefined;
      throw classifyS3Error(err, this.#target);
    });
    return this.#lockChecked;
  }

  /**
   * Whether the bucket has Object Lock, asked once at the first removal. Credentials that may not ask are taken to
   * mean no: removals then work as they always did.
   */
  #hasObjectLock(): Promise<boolean> {
    if (this.#locker) return Promise.resolve(true);
    this.#bucketLocks ??= this.#signed!.objectLockEnabled().catch((err: unknown) => {
      if ((statusOf(err) ?? 0) >= 400 && (statusOf(err) ?? 0) < 500) return false;
      // a network failure or a 5xx says nothing: the next removal asks again
      this.#bucketLocks = undefined;
      throw err;
    });
    return this.#bucketLocks;
  }

  /** In recovery mode, the version of `h` to read (undefined: the current object). */
  async #version(
    h: Handle,
    key: string,
    signal?: AbortSignal,
  ): Promise<{ versionId: string; size: number } | undefined> {
    if (!this.#picker || h.type === 'lock') return undefined;
    const v = await this.#picker.pick(key, h.type, signal);
    if (!v) throw new NotExistError(this.location, h);
    return v;
  }

  /** Recovery mode reads; it writes nothing but the lock of the operation reading. */
  #refuseInRecovery(h: Handle, what: string): void {
    if (this.#picker && h.type !== 'lock') {
      throw new PermanentError(
        `recoverVersions: ${this.location} is open to read what its object versions hold; it does not ${what} ${h.type} files.`,
      );
    }
  }

  async #extend(locker: ObjectLocker, h: Handle): Promise<boolean> {
    try {
      await this.#lockReady();
      return await locker.extend(this.#key(h));
    } catch (err) {
      throw classifyS3Error(err, this.#target, h);
    }
  }

  create(): Promise<void> {
    return Promise.all([this.#ready(), this.#lockReady()]).then(() => undefined);
  }

  async save(h: Handle, data: Uint8Array, signal?: AbortSignal, sha256?: string): Promise<void> {
    const key = this.#key(h);
    this.#refuseInRecovery(h, 'save');
    try {
      await this.#lockReady();
      if (data.length <= this.#multipartAbove) {
        await (await this.#requests).put(key, data, signal, sha256, this.#locker?.headers(h, data));
      } else {
        await this.#multipart(key, data, signal);
      }
    } catch (err) {
      throw classifyS3Error(err, this.#target, h);
    }
  }

  async #multipart(key: string, data: Uint8Array, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const [{ Upload }, sdk] = await Promise.all([import('@aws-sdk/lib-storage'), this.#sdkRequests()]);
    signal?.throwIfAborted();
    const upload = new Upload({
      client: sdk.client,
      params: { Bucket: this.#target.bucket, Key: key, Body: data },
      partSize: this.#partSize,
      queueSize: this.#partsInFlight,
      // an interrupted upload is aborted, so no orphaned parts keep costing storage
      leavePartsOnError: false,
    });
    const onAbort = (): void => void upload.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await upload.done();
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async load(h: Handle, offset = 0, length = 0, signal?: AbortSignal): Promise<Uint8Array> {
    const key = this.#key(h);
    const range =
      offset === 0 && length === 0 ? undefined : `bytes=${offset}-${length === 0 ? '' : offset + length - 1}`;
    let bytes: Uint8Array;
    let size: number;
    try {
      await this.#lockReady();
      const version = await this.#version(h, key, signal);
      const res = await (await this.#requests).get(key, range, signal, version?.versionId);
      bytes = res.bytes;
      size = totalSize(res.contentRange) ?? bytes.length;
    } catch (err) {
      // a range starting at or past the end: the size decides between "empty rest" and "too short"
      if (statusOf(err) !== 416) {
        throw classifyS3Error(err, this.#target, h);
      }
      const { size: actual } = await this.stat(h);
      rangeEnd(this.location, h, actual, offset, length);
      return new Uint8Array();
    }
    // S3 silently shortens a range that runs past the end; the contract says that is an error
    rangeEnd(this.location, h, size, offset, length);
    return bytes;
  }

  async stat(h: Handle): Promise<FileInfo> {
    const key = this.#key(h);
    try {
      await this.#lockReady();
      const version = await this.#version(h, key);
      if (version) return { name: h.name, size: version.size };
      return { name: h.name, size: (await (await this.#requests).head(key)).size };
    } catch (err) {
      if (statusOf(err) === 404) await this.#ready();
      throw classifyS3Error(err, this.#target, h);
    }
  }

  async remove(h: Handle): Promise<void> {
    const key = this.#key(h);
    this.#refuseInRecovery(h, 'remove');
    try {
      await this.#lockReady();
      // in a bucket with Object Lock, versions still retained are not tried: the call rejects with a LockedError
      if (this.#signed && (await this.#hasObjectLock())) await removeVersions(this.#signed, key, h, this.location);
      // S3 answers success for a missing key too, which is what the contract asks
      else await (await this.#requests).delete(key);
    } catch (err) {
      throw classifyS3Error(err, this.#target, h);
    }
  }

  async *list(type: FileType, signal?: AbortSignal): AsyncIterable<FileInfo> {
    if (type === 'config') return;
    const folder = typeFolders[type];
    // no delimiter: one listing walks all of data/00..ff at once
    const prefix = this.#prefix ? `${this.#prefix}/${folder}/` : `${folder}/`;
    if (this.#picker && type !== 'lock') {
      try {
        await this.#lockReady();
        for await (const v of this.#picker.list(prefix, type, signal))
          yield { name: v.key.slice(v.key.lastIndexOf('/') + 1), size: v.size };
      } catch (err) {
        throw classifyS3Error(err, this.#target);
      }
      return;
    }
    await this.#lockReady();
    let token: string | undefined;
    do {
      let page;
      try {
        page = await (await this.#requests).list(prefix, token, signal);
      } catch (err) {
        throw classifyS3Error(err, this.#target);
      }
      for (const obj of page.objects) {
        const name = obj.key.slice(obj.key.lastIndexOf('/') + 1);
        if (name) yield { name, size: obj.size };
      }
      token = page.next;
    } while (token);
  }

  isNotExist(err: unknown): boolean {
    return isNotExistError(err);
  }

  async close(): Promise<void> {
    const opened = await Promise.allSettled([this.#requests, ...(this.#sdk ? [this.#sdk] : [])]);
    // without credentials at hand, both are the same SDK client
    for (const r of new Set(opened.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : [])))) r.close();
  }
}

function statusOf(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/** The object size from a Content-Range header such as "bytes 0-9/1234". */
function totalSize(contentRange: string | undefined): number | undefined {
  const total = contentRange?.split('/')[1];
  return total && total !== '*' ? Number(total) : undefined;
}
