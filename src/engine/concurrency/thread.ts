// Starts worker threads on our TypeScript modules through a plain JavaScript entry (thread-entry.mjs), so a thread
// reads its modules from the compile cache instead of loading the type stripper and compiling them again. A thread
// may also be started ahead of need: Node's internal modules and ours still load in each thread, and a thread
// started while the repository opens has done that by the time the first file is read.
import { Worker, type WorkerOptions } from 'node:worker_threads';

const entry = new URL('./thread-entry.mjs', import.meta.url);
/** threads started ahead, by module, until a startThread of the same module takes them */
const spares = new Map<string, Worker>();

type ThreadOptions = Omit<WorkerOptions, 'argv' | 'workerData'>;

function spawn(module: URL, options: ThreadOptions): Worker {
  return new Worker(entry, { ...options, argv: [module.href] });
}

/**
 * A thread running `module`: the one started ahead for it, if any, else a new one. A thread gets what it needs by
 * message rather than workerData, since one started ahead began before that was known.
 */
export function startThread(module: URL, options: ThreadOptions): Worker {
  const spare = spares.get(module.href);
  if (spare === undefined) return spawn(module, options);
  spares.delete(module.href);
  spare.ref();
  return spare;
}

/**
 * Starts one thread for `module` now, for the next startThread of it, with the same options. While spare it does
 * not keep the process alive; one that fails to start is dropped (the thread started in its place reports why).
 */
export function startThreadAhead(module: URL, options: ThreadOptions): void {
  if (spares.has(module.href)) return;
  const thread = spawn(module, options);
  thread.unref();
  spares.set(module.href, thread);
  const drop = (): void => {
    if (spares.get(module.href) === thread) spares.delete(module.href);
  };
  thread.on('error', drop);
  thread.on('exit', drop);
}

/** Stops the thread started ahead for `module` that nothing took. */
export async function stopSpareThread(module: URL): Promise<void> {
  const spare = spares.get(module.href);
  spares.delete(module.href);
  await spare?.terminate();
}

/** Whether a thread was started ahead for `module` and not taken yet. */
export function hasSpareThread(module: URL): boolean {
  return spares.has(module.href);
}
