// A backend whose implementation is loaded on first use. The S3 SDK takes most of a second to import, which
// every command paid even for a filesystem repository; now only S3 repositories pay it, and only once.
import type { Backend, FileInfo, FileType, Handle, ObjectLockPolicy, Retention } from './backend.ts';
import { isNotExistError } from './errors.ts';

export class DeferredBackend implements Backend {
  readonly location: string;
  readonly #load: () => Promise<Backend>;
  #backend: Promise<Backend> | undefined;
  readonly retention: Retention | undefined;

  /** `objectLock`: the policy the loaded backend writes under, so callers see its retention before it loads */
  constructor(location: string, load: () => Promise<Backend>, objectLock?: ObjectLockPolicy) {
    this.location = location;
    this.#load = load;
    this.retention = objectLock && {
      policy: objectLock,
      extend: async (h) => {
        const retention = (await this.#get()).retention;
        if (!retention) throw new Error(`${location} was loaded without its object-lock policy`);
        return retention.extend(h);
      },
    };
  }

  #get(): Promise<Backend> {
    this.#backend ??= this.#load();
    return this.#backend;
  }

  async create(): Promise<void> {
    return (await this.#get()).create();
  }

  async save(h: Handle, data: Uint8Array, signal?: AbortSignal, sha256?: string): Promise<void> {
    return (await this.#get()).save(h, data, signal, sha256);
  }

  async load(h: Handle, offset?: number, length?: number, signal?: AbortSignal): Promise<Uint8Array> {
    return (await this.#get()).load(h, offset, length, signal);
  }

  async stat(h: Handle): Promise<FileInfo> {
    return (await this.#get()).stat(h);
  }

  async remove(h: Handle): Promise<void> {
    return (await this.#get()).remove(h);
  }

  async *list(type: FileType, signal?: AbortSignal): AsyncIterable<FileInfo> {
    yield* (await this.#get()).list(type, signal);
  }

  isNotExist(err: unknown): boolean {
    return isNotExistError(err);
  }

  async close(): Promise<void> {
    if (this.#backend) await (await this.#backend).close();
  }
}
