// A view of a backend whose first pack read stands still until the test opens the gate, so a test can hold an
// operation in the middle of its work (a restore reading) while it tries another one beside it.
import type { Backend } from '../../src/engine/backend/backend.ts';

export interface Gated {
  view: Backend;
  /** resolves once the first pack read has begun and is held */
  reading: Promise<void>;
  open(): void;
}

export function gated(backend: Backend): Gated {
  let open!: () => void;
  let reading!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const started = new Promise<void>((r) => (reading = r));
  const view = new Proxy(backend, {
    get(target, prop) {
      if (prop === 'load') {
        return async (h: Parameters<Backend['load']>[0], ...rest: [number?, number?, AbortSignal?]) => {
          if (h.type === 'pack') {
            reading();
            await opened;
          }
          return target.load(h, ...rest);
        };
      }
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { view, reading: started, open };
}
