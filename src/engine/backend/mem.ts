// In-memory backend for fast unit tests of everything above the storage layer.

import { objectPath, typeFolders } from './backend.ts';
import type { Backend, FileInfo, FileType, Handle } from './backend.ts';
import { checkHandle, isNotExistError, NotExistError, rangeEnd } from './errors.ts';

export class MemBackend implements Backend {
  readonly location: string;
  #files = new Map<string, Uint8Array>();

  constructor(location = 'mem:') {
    this.location = location;
  }

  async create(): Promise<void> {}

  async save(h: Handle, data: Uint8Array, signal?: AbortSignal): Promise<void> {
    checkHandle(h);
    signal?.throwIfAborted();
    // a copy, so a caller reusing its buffer cannot change what was "stored" (Buffer#slice would be a view)
    this.#files.set(objectPath(h), new Uint8Array(data));
  }

  async load(h: Handle, offset = 0, length = 0, signal?: AbortSignal): Promise<Uint8Array> {
    checkHandle(h);
    signal?.throwIfAborted();
    const data = this.#files.get(objectPath(h));
    if (!data) throw new NotExistError(this.location, h);
    return data.slice(offset, rangeEnd(this.location, h, data.length, offset, length));
  }

  async stat(h: Handle): Promise<FileInfo> {
    checkHandle(h);
    const data = this.#files.get(objectPath(h));
    if (!data) throw new NotExistError(this.location, h);
    return { name: h.name, size: data.length };
  }

  async remove(h: Handle): Promise<void> {
    checkHandle(h);
    this.#files.delete(objectPath(h));
  }

  async *list(type: FileType, signal?: AbortSignal): AsyncIterable<FileInfo> {
    if (type === 'config') return;
    const prefix = `${typeFolders[type]}/`;
    // snapshot the keys so saves and removes during the walk do not disturb it
    for (const path of [...this.#files.keys()]) {
      signal?.throwIfAborted();
      const data = this.#files.get(path);
      if (!path.startsWith(prefix) || !data) continue;
      yield { name: path.slice(path.lastIndexOf('/') + 1), size: data.length };
    }
  }

  isNotExist(err: unknown): boolean {
    return isNotExistError(err);
  }

  async close(): Promise<void> {}
}
