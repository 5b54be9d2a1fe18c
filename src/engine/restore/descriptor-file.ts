// A file the restorer created below its target (a bare descriptor from target-entries.ts) with the few FileHandle
// methods the file writer uses: positioned writes and truncation through libuv's threads, and a close that waits
// for the writes still in flight, as FileHandle's does, so nothing lands after the file is given up.
import { ftruncate, write } from 'node:fs';
import { promisify } from 'node:util';
import { closeDescriptor } from '../sys/beneath.ts';

const writeAt = promisify(write);
const truncateTo = promisify(ftruncate);

export class DescriptorFile {
  readonly fd: number;
  #inFlight = 0;
  #drained: PromiseWithResolvers<void> | undefined;

  constructor(fd: number) {
    this.fd = fd;
  }

  write(buf: Uint8Array, offset: number, length: number, position: number): Promise<unknown> {
    return this.#tracked(writeAt(this.fd, buf, offset, length, position));
  }

  truncate(length: number): Promise<void> {
    return this.#tracked(truncateTo(this.fd, length));
  }

  async close(): Promise<void> {
    while (this.#inFlight > 0) {
      this.#drained ??= Promise.withResolvers<void>();
      await this.#drained.promise;
    }
    closeDescriptor(this.fd);
  }

  async #tracked<T>(op: Promise<T>): Promise<T> {
    this.#inFlight++;
    try {
      return await op;
    } finally {
      if (--this.#inFlight === 0) {
        this.#drained?.resolve();
        this.#drained = undefined;
      }
    }
  }
}
