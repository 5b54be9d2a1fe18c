// How much of a hook's output is kept: the end of what it printed, so that a command printing without limit (a
// `cat` of a log, a loop) costs ferry a few KiB of memory and status, whatever it prints.

export const outputLimit = 4096;

/** The last `limit` bytes of UTF-8, starting on a character boundary. */
export function lastBytes(bytes: Buffer, limit = outputLimit): Buffer {
  if (bytes.length <= limit) return bytes;
  let start = bytes.length - limit;
  // a cut in the middle of a character would decode to a replacement character at the start
  while (start < bytes.length && (bytes[start] & 0xc0) === 0x80) start++;
  return bytes.subarray(start);
}

/** The same bound on text (what a PodExec returned, with a message appended). */
export function lastText(text: string, limit = outputLimit): string {
  if (text.length <= limit / 4) return text;
  return lastBytes(Buffer.from(text, 'utf8'), limit).toString('utf8');
}

/** Keeps the last bytes of everything written to it, in the order written. */
export class OutputTail {
  #kept: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): void {
    const all = chunk.length >= outputLimit ? chunk : Buffer.concat([this.#kept, chunk]);
    // a copy, so a large chunk is not held alive by the small slice kept of it
    this.#kept = all.length > outputLimit ? Buffer.from(lastBytes(all)) : all;
  }

  text(): string {
    return this.#kept.toString('utf8');
  }
}
