// consola, loaded the first time something is printed through it. Its full entry (reporters, icons, boxes) is a
// noticeable part of a short command's start, and a command run for its JSON (scripts, Jobs, the benchmarks)
// prints nothing through it. Loaded synchronously, so messages come out in the order they are written.
import { createRequire } from 'node:module';
import { stripVTControlCharacters } from 'node:util';
import type { ConsolaInstance } from 'consola';

let loaded: ConsolaInstance | undefined;

/** `text` as it may go to `stream`: colour codes only on a terminal (a log file or a pipe gets plain text). */
export function forStream(text: string, stream: NodeJS.WriteStream): string {
  return stream.isTTY === true ? text : stripVTControlCharacters(text);
}

/** A stream that drops colour codes when it is not a terminal; consola picks colours by stdout alone. */
function plainUnlessTerminal(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  return { write: (text: string) => stream.write(forStream(text, stream)) } as NodeJS.WriteStream;
}

function real(): ConsolaInstance {
  if (loaded) return loaded;
  // the package's CommonJS entry exports the same default instance its ES module does
  const instance = createRequire(import.meta.url)('consola') as ConsolaInstance;
  // its clock (a locale time, on wide terminals only) is a second time format beside the RFC 3339 ones ferry prints
  instance.options.formatOptions = { ...instance.options.formatOptions, date: false };
  instance.options.stdout = plainUnlessTerminal(process.stdout);
  instance.options.stderr = plainUnlessTerminal(process.stderr);
  loaded = instance;
  return loaded;
}

export const consola: ConsolaInstance = new Proxy({} as ConsolaInstance, {
  get(_, key) {
    const instance = real();
    const value: unknown = Reflect.get(instance, key);
    return typeof value === 'function' ? value.bind(instance) : value;
  },
});
