// consola, loaded the first time something is printed through it. Its full entry (reporters, icons, boxes) is a
// noticeable part of a short command's start, and a command run for its JSON (scripts, Jobs, the benchmarks)
// prints nothing through it. Loaded synchronously, so messages come out in the order they are written.
import { createRequire } from 'node:module';
import type { ConsolaInstance } from 'consola';

let loaded: ConsolaInstance | undefined;

function real(): ConsolaInstance {
  // the package's CommonJS entry exports the same default instance its ES module does
  loaded ??= createRequire(import.meta.url)('consola') as ConsolaInstance;
  return loaded;
}

export const consola: ConsolaInstance = new Proxy({} as ConsolaInstance, {
  get(_, key) {
    const instance = real();
    const value: unknown = Reflect.get(instance, key);
    return typeof value === 'function' ? value.bind(instance) : value;
  },
});
