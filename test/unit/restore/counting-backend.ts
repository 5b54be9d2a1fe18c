// An in-memory backend that counts the reads of pack files, so tests can check how reads are batched.
import { MemBackend } from '../../../src/engine/backend/mem.ts';
import type { Handle } from '../../../src/engine/backend/backend.ts';

export class CountingBackend extends MemBackend {
  packReads = 0;
  packBytes = 0;

  override async load(h: Handle, offset = 0, length = 0, signal?: AbortSignal): Promise<Uint8Array> {
    const data = await super.load(h, offset, length, signal);
    if (h.type === 'pack') {
      this.packReads++;
      this.packBytes += data.length;
    }
    return data;
  }
}

/** Keeps every pack read it hands out, to see which were freed or written over. */
export class KeepingBackend extends CountingBackend {
  reads: Uint8Array[] = [];

  override async load(h: Handle, offset = 0, length = 0, signal?: AbortSignal): Promise<Uint8Array> {
    const data = await super.load(h, offset, length, signal);
    if (h.type === 'pack') this.reads.push(data);
    return data;
  }
}
